/**
 * A POSIX tar writer and reader for image layers and the image archive (src/release/image.ts).
 * Deterministic by construction: every header carries the same mtime (0), owner and no user or
 * group names, so the same entries always give the same bytes. Names longer than ustar's
 * 100 bytes get a PAX extended header ("path" / "linkpath"), which every runtime reads.
 */

export type TarEntry =
  | { type: "file"; path: string; mode: number; data: Buffer; uid?: number; gid?: number }
  | { type: "dir"; path: string; mode: number; uid?: number; gid?: number }
  | { type: "symlink"; path: string; target: string };

const BLOCK = 512;

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(fields: { name: string; mode: number; uid: number; gid: number; size: number; type: string; linkname: string }): Buffer {
  const block = Buffer.alloc(BLOCK);
  block.write(fields.name, 0, 100, "utf8");
  block.write(octal(fields.mode, 8), 100, "ascii");
  block.write(octal(fields.uid, 8), 108, "ascii");
  block.write(octal(fields.gid, 8), 116, "ascii");
  block.write(octal(fields.size, 12), 124, "ascii");
  block.write(octal(0, 12), 136, "ascii");
  block.write(fields.type, 156, "ascii");
  block.write(fields.linkname, 157, 100, "utf8");
  block.write("ustar\0", 257, "ascii");
  block.write("00", 263, "ascii");
  // The checksum is computed with its own field as spaces.
  block.fill(" ", 148, 156);
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % BLOCK;
  return rest === 0 ? [data] : [data, Buffer.alloc(BLOCK - rest)];
}

/** A PAX record: "<length> <key>=<value>\n", where the length counts itself. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(body);
  while (String(length).length + Buffer.byteLength(body) !== length) length = String(length).length + Buffer.byteLength(body);
  return `${length}${body}`;
}

const TYPE_FLAG = { file: "0", symlink: "2", dir: "5" } as const;

/** The entries as one tar archive, in the order given. */
export function writeTar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const name = entry.type === "dir" && !entry.path.endsWith("/") ? `${entry.path}/` : entry.path;
    const linkname = entry.type === "symlink" ? entry.target : "";
    const pax = [
      ...(Buffer.byteLength(name) > 100 ? [paxRecord("path", name)] : []),
      ...(Buffer.byteLength(linkname) > 100 ? [paxRecord("linkpath", linkname)] : []),
    ].join("");
    if (pax !== "") {
      const data = Buffer.from(pax, "utf8");
      parts.push(header({ name: "././@PaxHeader", mode: 0o644, uid: 0, gid: 0, size: data.length, type: "x", linkname: "" }), ...padded(data));
    }
    const data = entry.type === "file" ? entry.data : Buffer.alloc(0);
    const owner = entry.type === "symlink" ? { uid: 0, gid: 0 } : { uid: entry.uid ?? 0, gid: entry.gid ?? 0 };
    const mode = entry.type === "symlink" ? 0o777 : entry.mode;
    parts.push(header({ name: name.slice(0, 100), mode, ...owner, size: data.length, type: TYPE_FLAG[entry.type], linkname: linkname.slice(0, 100) }));
    if (data.length > 0) parts.push(...padded(data));
  }
  parts.push(Buffer.alloc(BLOCK * 2));
  return Buffer.concat(parts);
}

function field(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return raw.subarray(0, end === -1 ? length : end).toString("utf8");
}

function paxFields(data: Buffer): Map<string, string> {
  const fields = new Map<string, string>();
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = Number(data.subarray(offset, space).toString("ascii"));
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    fields.set(record.slice(0, equals), record.slice(equals + 1));
    offset += length;
  }
  return fields;
}

/** The entries of a tar archive written by writeTar (or any ustar/PAX writer of these types). */
export function readTar(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  let offset = 0;
  let pax = new Map<string, string>();
  while (offset + BLOCK <= archive.length) {
    const block = archive.subarray(offset, offset + BLOCK);
    if (block.every((byte) => byte === 0)) break;
    const size = parseInt(field(block, 124, 12) || "0", 8);
    const type = String.fromCharCode(block[156] ?? 0);
    const data = archive.subarray(offset + BLOCK, offset + BLOCK + size);
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
    if (type === "x") {
      pax = paxFields(data);
      continue;
    }
    const prefix = field(block, 345, 155);
    const name = pax.get("path") ?? (prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100));
    const mode = parseInt(field(block, 100, 8), 8);
    const owner = { uid: parseInt(field(block, 108, 8), 8), gid: parseInt(field(block, 116, 8), 8) };
    if (type === "5") entries.push({ type: "dir", path: name, mode, ...owner });
    else if (type === "2") entries.push({ type: "symlink", path: name, target: pax.get("linkpath") ?? field(block, 157, 100) });
    else entries.push({ type: "file", path: name, mode, data: Buffer.from(data), ...owner });
    pax = new Map();
  }
  return entries;
}
