/**
 * Permissions k8s/base grants that the real-cluster tier has no way to exercise, each with the
 * reason. Everything else k8s/base grants must be used by some call the tier's runner makes.
 */
import type { Grant } from "../deploy/rbac.ts";

export const GRANTS_THE_TIER_DOES_NOT_USE: { grant: Grant; why: string }[] = [];
