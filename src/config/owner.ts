/**
 * The owner identity a runner stamps on what it creates when `RUNNER_OWNER_ID` is unset. Objects
 * written before owners existed carry none and count as this identity's (docs/ownership.md).
 * Here rather than beside the labels so that reading the configuration loads no Kubernetes code.
 */
export const DEFAULT_OWNER_ID = "default";
