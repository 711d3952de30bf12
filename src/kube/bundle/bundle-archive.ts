/**
 * The bundle archive the `body-fetch` / `context-fetch` init containers download and unpack with
 * busybox `tar xzf` (docs/kubernetes.md "Run pods"): a gzip'd POSIX ustar archive, one header per file, no
 * directory entries (tar creates parents), every field deterministic (mode 0644, uid/gid 0,
 * mtime 0), so equal bundles give equal archives. Names over 100 bytes get a pax header.
 */
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import { invalidPathMessage, normaliseRelativePath } from "../../contract/paths.ts";
import type { BundleFile } from "../../contract/wire.ts";

const gzipAsync = promisify(gzip);

const BLOCK = 512;
const NAME_LIMIT = 100;

/** A file the archive cannot hold as asked: a path the path guard refuses. */
export class BundleArchiveError extends Error {
  override name = "BundleArchiveError";
}

/** `width - 1` zero-padded octal digits and a NUL: the ustar encoding of every numeric field. */
function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(name: Buffer, size: number, typeflag: "0" | "x" = "0"): Buffer {
  const block = Buffer.alloc(BLOCK); // unused bytes are NUL
  name.copy(block, 0, 0, Math.min(name.length, NAME_LIMIT));
  block.write(octal(0o644, 8), 100, "ascii"); // mode
  block.write(octal(0, 8), 108, "ascii"); // uid
  block.write(octal(0, 8), 116, "ascii"); // gid
  block.write(octal(size, 12), 124, "ascii"); // size
  block.write(octal(0, 12), 136, "ascii"); // mtime
  block.write("        ", 148, "ascii"); // checksum is computed over the header with this field as spaces
  block.write(typeflag, 156, "ascii"); // typeflag: regular file, or a pax extended header
  block.write("ustar\0", 257, "ascii"); // magic
  block.write("00", 263, "ascii"); // version
  let checksum = 0;
  for (const byte of block) checksum += byte;
  block.write(octal(checksum, 8), 148, "ascii");
  return block;
}

function padding(length: number): Buffer {
  return Buffer.alloc((BLOCK - (length % BLOCK)) % BLOCK);
}

/** One pax record, `<length> path=<name>\n`, whose decimal length counts its own digits. */
function paxPathRecord(name: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(" path="), name, Buffer.from("\n")]);
  let length = body.length + 1;
  while (String(length).length + body.length !== length) length = String(length).length + body.length;
  return Buffer.concat([Buffer.from(String(length)), body]);
}

function contentBytes(file: BundleFile): Buffer {
  return Buffer.from(file.contents, file.encoding === "base64" ? "base64" : "utf8");
}

function archiveName(relativePath: string): Buffer {
  const normalised = normaliseRelativePath(relativePath);
  if (normalised === undefined) throw new BundleArchiveError(invalidPathMessage(relativePath));
  return Buffer.from(normalised, "utf8");
}

/**
 * The headers of one file. A name over the ustar field's 100 bytes goes into a pax extended
 * header (POSIX.1-2001, read by GNU tar, bsdtar and busybox) before the file's own header,
 * never truncated into a different path.
 */
function fileHeaders(name: Buffer, size: number): Buffer[] {
  if (name.length <= NAME_LIMIT) return [header(name, size)];
  const record = paxPathRecord(name);
  return [header(Buffer.from("PaxHeader"), record.length, "x"), record, padding(record.length), header(name, size)];
}

/** The uncompressed ustar archive; base64-encoded files are written as their decoded bytes. */
export function tarArchive(files: readonly BundleFile[]): Buffer {
  const parts: Buffer[] = [];
  for (const file of files) {
    const name = archiveName(file.relativePath);
    const data = contentBytes(file);
    parts.push(...fileHeaders(name, data.length), data, padding(data.length));
  }
  parts.push(Buffer.alloc(2 * BLOCK)); // two zero blocks end the archive
  return Buffer.concat(parts);
}

/** The gzip'd archive served on the bundle route; compression runs off the event loop. */
export async function bundleArchive(files: readonly BundleFile[]): Promise<Buffer> {
  return gzipAsync(tarArchive(files));
}
