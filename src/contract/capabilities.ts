/**
 * The capabilities document (docs/api.md "Capabilities") and its config-schema builder (docs/api.md "Capabilities").
 */
import type { Capabilities } from "./responses.ts";
import { SUPERSEDED_BY_TELO } from "./session-config.ts";
import type { Terms } from "./wire.ts";

export type SessionConfigSchemaInputs = {
  imageDefault: string;
  imageEnum?: string[] | undefined;
  pullPolicyDefault?: "missing" | "always" | "never" | undefined;
  pullPolicyDescription?: string | undefined;
  enforced?: boolean | undefined;
  registryUrl?: boolean | undefined;
  /** The runner runs named Telo versions: the keys a version supersedes are deprecated and optional. */
  teloVersions?: boolean | undefined;
};

const DEFAULT_PULL_POLICY_DESCRIPTION =
  "`missing` pulls on first use; `always` forces a pull every run; `never` fails if the image isn't present.";

/** The JSON Schema of a session's `config` the capabilities advertise (not a valibot schema: a document). */
export function configJsonSchema(inputs: SessionConfigSchemaInputs) {
  const imageEnum = inputs.imageEnum && inputs.imageEnum.length > 0 ? inputs.imageEnum : undefined;
  const deprecated = inputs.teloVersions ? { deprecated: true } : {};
  return {
    type: "object",
    required: inputs.teloVersions ? [] : ["image", "pullPolicy"],
    properties: {
      image: {
        type: "string",
        minLength: 1,
        default: inputs.imageDefault,
        title: "Image",
        description: "Container image the runner spawns for each run.",
        // A non-empty picker list overrides `enforced`: the client may choose within it.
        ...(imageEnum ? { enum: imageEnum } : inputs.enforced ? { readOnly: true } : {}),
        ...deprecated,
      },
      pullPolicy: {
        type: "string",
        enum: ["missing", "always", "never"],
        default: inputs.pullPolicyDefault ?? "missing",
        title: "Pull policy",
        description: inputs.pullPolicyDescription ?? DEFAULT_PULL_POLICY_DESCRIPTION,
        ...deprecated,
      },
      ...(inputs.registryUrl && {
        registryUrl: {
          type: "string",
          title: "Registry URL",
          description:
            "Optional base URL for the telo module registry, forwarded to the runner as TELO_REGISTRY_URL. Leave blank for the default registry.",
        },
      }),
    },
  };
}

export type CapabilitiesInputs = {
  displayName: string;
  description: string;
  configSchema: ReturnType<typeof configJsonSchema>;
  /** `features.teloVersions`: apps may name a Telo version (docs/telo-versions.md). */
  teloVersions?: boolean | undefined;
  io: ("tty" | "streams")[];
  ports: boolean;
  watch: boolean;
  /** Catalog names usable as agents (those declaring a port). */
  agents: string[];
  terms: Terms | undefined;
  apps: { name: string; title?: string | undefined; description?: string | undefined }[];
};

export function capabilitiesDocument(inputs: CapabilitiesInputs): Capabilities {
  return {
    displayName: inputs.displayName,
    description: inputs.description,
    config: { schema: inputs.configSchema, ...(inputs.teloVersions && { supersededByTelo: [...SUPERSEDED_BY_TELO] }) },
    features: {
      io: inputs.io,
      ports: inputs.ports,
      watch: inputs.watch,
      ...(inputs.teloVersions && { teloVersions: true }),
      // Agents are offered only where watch sessions are, and only when some exist.
      ...(inputs.watch && inputs.agents.length > 0 && { agents: inputs.agents }),
    },
    ...(inputs.terms && { terms: inputs.terms }),
    // Identity fields only: a catalog entry's image and env never leave the runner.
    ...(inputs.apps.length > 0 && {
      apps: inputs.apps.map((app) => ({
        name: app.name,
        ...(app.title !== undefined && { title: app.title }),
        ...(app.description !== undefined && { description: app.description }),
      })),
    }),
  };
}
