/**
 * The tier's file order: every test file in vitest's usual order; then the runner installed in
 * the cluster (test/cluster/incluster/, in the order below: each install ends by removing the
 * runner's namespaces, which the host-run files need); then rbac-audit.test.ts, which reads the
 * audit log of all the calls the others made.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const ORDERED_LAST = ["/test/cluster/incluster/kustomize.test.ts", "/test/cluster/incluster/helm.test.ts", "/test/cluster/incluster/releases.test.ts", "/test/cluster/incluster/replicas.test.ts", "/test/cluster/rbac-audit.test.ts"];

export default class AuditLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const rank = (file: TestSpecification) => ORDERED_LAST.findIndex((suffix) => file.moduleId.endsWith(suffix));
    return [...sorted.filter((file) => rank(file) === -1), ...sorted.filter((file) => rank(file) !== -1).sort((a, b) => rank(a) - rank(b))];
  }
}
