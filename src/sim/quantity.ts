// Resource quantities (`500m`, `512Mi`, `1G`) as numbers, for quota arithmetic.
const SUFFIX: Record<string, number> = {
  "": 1,
  m: 1e-3,
  k: 1e3,
  K: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 1024,
  Mi: 1024 ** 2,
  Gi: 1024 ** 3,
  Ti: 1024 ** 4,
  Pi: 1024 ** 5,
  Ei: 1024 ** 6,
};

export function parseQuantity(q: string | number | undefined): number {
  if (q === undefined) return 0;
  if (typeof q === "number") return q;
  const m = /^([+-]?[0-9.]+(?:[eE][+-]?\d+)?)([a-zA-Z]*)$/.exec(q.trim());
  if (!m) return NaN;
  const mult = SUFFIX[m[2]!];
  return mult === undefined ? NaN : Number(m[1]) * mult;
}

/** Renders a sum the way the apiserver prints quotas: cpu in cores or millicores, bytes in binary units. */
export function formatQuantity(resource: string, value: number): string {
  if (resource.endsWith("cpu")) return Number.isInteger(value) ? String(value) : `${Math.round(value * 1000)}m`;
  if (/memory|storage/.test(resource) && value > 0) {
    for (const unit of ["Ei", "Pi", "Ti", "Gi", "Mi", "Ki"]) {
      const size = SUFFIX[unit]!;
      if (value % size === 0) return `${value / size}${unit}`;
    }
  }
  return String(value);
}
