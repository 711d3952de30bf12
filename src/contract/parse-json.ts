/** JSON text read through a valibot schema, as every JSON the cluster or a pod hands the runner is. */
import * as v from "valibot";

/** `text` parsed and checked against `schema`; undefined when it is not JSON or not of that shape. */
export function parseJsonAs<const S extends v.GenericSchema>(schema: S, text: string): v.InferOutput<S> | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  const parsed = v.safeParse(schema, json);
  return parsed.success ? parsed.output : undefined;
}
