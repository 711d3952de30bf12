/**
 * The bundle archive the `body-fetch` / `context-fetch` init containers download and unpack with
 * busybox `tar xzf` (kubernetes.md §2.2): a gzip'd POSIX ustar archive, one header per file, no
 * directory entries (tar creates parents), every field deterministic (mode 0644, uid/gid 0,
 * mtime 0), so equal bundles give equal archives.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { invalidPathMessage, normaliseRelativePath } from "../contract/paths.ts";
import type { BundleFile } from "../contract/wire.ts";

const gzipAsync = promisify(gzip);

const BLOCK = 512;
const NAME_LIMIT = 100;

/** A file the archive cannot hold as asked: a traversal path or a name too long for ustar. */
export class BundleArchiveError extends Error {
  override name = "BundleArchiveError";
}

/** `width - 1` zero-padded octal digits and a NUL: the ustar encoding of every numeric field. */
function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: Buffer, size: number): Buffer {
  const block = Buffer.alloc(BLOCK); // unused bytes are NUL
  name.copy(block, 0);
  block.write(octal(0o644, 8), 100, "ascii"); // mode
  block.write(octal(0, 8), 108, "ascii"); // uid
  block.write(octal(0, 8), 116, "ascii"); // gid
  block.write(octal(size, 12), 124, "ascii"); // size
  block.write(octal(0, 12), 136, "ascii"); // mtime
  block.write("        ", 148, "ascii"); // checksum is computed over the header with this field as spaces
  block.write("0", 156, "ascii"); // typeflag: regular file
  block.write("ustar\0", 257, "ascii"); // magic
  block.write("00", 263, "ascii"); // version
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(octal(checksum, 8), 148, "ascii");
  return block;
}

function contentBytes(file: BundleFile): Buffer {
  return Buffer.from(file.contents, file.encoding === "base64" ? "base64" : "utf8");
}

function archiveName(relativePath: string): Buffer {
  const normalised = normaliseRelativePath(relativePath);
  if (normalised === undefined) throw new BundleArchiveError(invalidPathMessage(relativePath));
  const name = Buffer.from(normalised, "utf8");
  // Never truncated: a truncated name would silently unpack to a different path.
  if (name.length > NAME_LIMIT) {
    throw new BundleArchiveError(`bundle path too long for tar (max ${NAME_LIMIT} bytes): '${normalised}'`);
  }
  return name;
}

/** The uncompressed ustar archive; base64-encoded files are written as their decoded bytes. */
export function tarArchive(files: readonly BundleFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    const name = archiveName(file.relativePath);
    const data = contentBytes(file);
    parts.push(header(name, data.length), data, Buffer.alloc((BLOCK - (data.length % BLOCK)) % BLOCK));
  }
  parts.push(Buffer.alloc(2 * BLOCK)); // two zero blocks end the archive
  return Buffer.concat(parts);
}

/** The gzip'd archive served on the bundle route; compression runs off the event loop. */
export async function bundleArchive(files: readonly BundleFile[]): Promise<Buffer> {
  return gzipAsync(tarArchive(files));
}
