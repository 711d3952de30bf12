// A bundle from a folder chosen in the browser (`<input type=file webkitdirectory>`): every
// file with its path relative to the folder, text as utf8 and anything else as base64, and the
// YAML files an entry may be chosen among.

// Version control and installed dependencies are not the app: they would only make the bundle
// big (the runner limits a create body's size), and the kernel installs what it needs.
const SKIPPED_FOLDERS = new Set([".git", "node_modules"]);
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** The file's path below the chosen folder (the browser prefixes the folder's own name). */
export function relativePathOf(file) {
  const path = file.webkitRelativePath || file.name;
  return path.split("/").slice(1).join("/") || file.name;
}

const skipped = (path) => path.split("/").slice(0, -1).some((segment) => SKIPPED_FOLDERS.has(segment));

function base64(bytes) {
  let binary = "";
  for (let index = 0; index < bytes.length; index += 0x8000) binary += String.fromCharCode(...bytes.subarray(index, index + 0x8000));
  return btoa(binary);
}

/** The bundle's files from the input's FileList, sorted by path, and how many were left out. */
export async function readFolder(fileList) {
  const files = [];
  let left = 0;
  for (const file of fileList) {
    const relativePath = relativePathOf(file);
    if (skipped(relativePath)) {
      left += 1;
      continue;
    }
    const bytes = new Uint8Array(await file.arrayBuffer());
    try {
      files.push({ relativePath, contents: utf8.decode(bytes) });
    } catch {
      files.push({ relativePath, contents: base64(bytes), encoding: "base64" });
    }
  }
  return { files: files.sort((a, b) => a.relativePath.localeCompare(b.relativePath)), left };
}

/** Paths an entry may be, the likeliest first: `telo.yaml` files by depth, then other YAML. */
export function entryCandidates(files) {
  const yaml = files.map((file) => file.relativePath).filter((path) => /\.ya?ml$/.test(path));
  const rank = (path) => [/(^|\/)telo\.yaml$/.test(path) ? 0 : 1, path.split("/").length];
  return yaml.sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || ra[1] - rb[1] || a.localeCompare(b);
  });
}
