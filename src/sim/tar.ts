// Reading a POSIX ustar archive, as busybox `tar x` does for what the runner's bundle archive and
// ordinary tools write: regular files (name + prefix), directories, and pax/GNU long-name records.
import { posix } from "node:path";

const BLOCK = 512;

export interface TarEntry {
  path: string;
  data: Buffer;
}

function text(block: Buffer, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return raw.subarray(0, nul < 0 ? raw.length : nul).toString("utf8");
}

/** The regular files of an archive, or the error busybox reports for a damaged one. */
export function readTar(archive: Buffer): TarEntry[] | { error: string } {
  const entries: TarEntry[] = [];
  let longName: string | undefined;
  for (let offset = 0; offset + BLOCK <= archive.length; ) {
    const header = archive.subarray(offset, offset + BLOCK);
    if (header.every((b) => b === 0)) return entries;
    const size = parseInt(text(header, 124, 12).trim() || "0", 8);
    let sum = 0;
    for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : header[i]!;
    if (!Number.isFinite(size) || parseInt(text(header, 148, 8).trim(), 8) !== sum) return { error: "tar: invalid tar header checksum" };
    const dataStart = offset + BLOCK;
    if (dataStart + size > archive.length) return { error: "tar: short read" };
    const data = archive.subarray(dataStart, dataStart + size);
    offset = dataStart + Math.ceil(size / BLOCK) * BLOCK;
    const type = String.fromCharCode(header[156]!);
    if (type === "x") {
      longName = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString("utf8"))?.[1] ?? longName;
      continue;
    }
    if (type === "L") {
      longName = text(data, 0, data.length);
      continue;
    }
    const prefix = text(header, 345, 155);
    const name = longName ?? (prefix ? `${prefix}/${text(header, 0, 100)}` : text(header, 0, 100));
    longName = undefined;
    if (type !== "0" && type !== "\0") continue; // directories are implied, links and devices not simulated
    // Absolute and escaping names stay inside the target directory, as busybox keeps them.
    const path = posix.normalize(`/${name}`).slice(1);
    if (path !== "") entries.push({ path, data: Buffer.from(data) });
  }
  return { error: "tar: short read" };
}
