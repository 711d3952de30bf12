/**
 * The tier's file order: every test file in vitest's usual order, then rbac-audit.test.ts, which
 * reads the audit log of all the calls the others made.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LAST = "/test/cluster/rbac-audit.test.ts";

export default class AuditLastSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    return [...sorted.filter((file) => !file.moduleId.endsWith(LAST)), ...sorted.filter((file) => file.moduleId.endsWith(LAST))];
  }
}
