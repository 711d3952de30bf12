/**
 * The workspace application manifest (docs/api.md "Watch sessions"): the Telo Application every watch pod's
 * `workspace` container runs, serving the shared `/workspace` volume over HTTP on PORT. It ships
 * with the runner and reaches the pod as the content-addressed ConfigMap of docs/kubernetes.md "ConfigMaps".
 *
 * Kept as a string constant rather than a .yaml file beside the code: tsc emits no YAML and the
 * runtime image carries only `dist/`, so a file read at startup would be missing there. The bytes
 * here are hashed into the ConfigMap name, so any edit (whitespace included) means a new name.
 */
/** What every route answers when its handler fails: 500 `{error: message}`. */
const ANSWERS_500 = `    catches:
      - status: 500
        content: { application/json: { body: !cel "{'error': error.message}" } }`;

export const WORKSPACE_APP_MANIFEST = `# The workspace surface of a Telo runner watch session. Mounted read-only into
# the session pod's \`workspace\` container; every app container shares the
# directory it serves.
kind: Telo.Application
metadata:
  name: TeloWorkspace
  version: 1.0.0
  description: |
    Lists, writes, reads and snapshots the files of a watch session's workspace
    for the runner. Answers JSON; a failing route answers 500 {error: message}.
imports:
  Http: std/http-server
  Fs: std/fs
  Run: std/run
ports:
  http:
    env: PORT
    default: 8099
variables:
  workspaceDir:
    env: WORKSPACE_DIR
    type: string
    default: /workspace
  exclude:
    env: WORKSPACE_EXCLUDE
    type: array
    items: { type: string }
    description: Base names skipped at any depth by the listing and the snapshot.
    default: [node_modules, .telo, .git]
targets:
  - !ref server
---
kind: Http.Server
metadata: { name: server }
port: !cel "ports.http"
mounts:
  - path: /
    mount: !ref api
---
kind: Fs.TreeSnapshot
metadata: { name: tree }
cwd: !cel "variables.workspaceDir"
---
kind: Fs.TreeSync
metadata: { name: sync }
cwd: !cel "variables.workspaceDir"
---
kind: Fs.FileRead
metadata: { name: read }
cwd: !cel "variables.workspaceDir"
---
kind: Http.Api
metadata: { name: api }
routes:
  # {files: [{path, hash}]}
  - request: { path: /workspace, method: GET }
    handler: !ref tree
    inputs:
      exclude: !cel "variables.exclude"
      content: false
    returns:
      - status: 200
        content: { application/json: { body: !cel "{'files': result.files.map(f, {'path': f.path, 'hash': f.hash})}" } }
${ANSWERS_500}
  # A change set {write: [{path, content, encoding}], delete: [path]} → {written, deleted}
  - request: { path: /workspace, method: POST }
    handler: !ref sync
    inputs:
      write: !cel "has(request.body.write) ? request.body.write : []"
      delete: !cel "has(request.body.delete) ? request.body.delete : []"
    returns:
      - status: 200
        content: { application/json: { body: !cel "{'written': result.written, 'deleted': result.deleted}" } }
${ANSWERS_500}
  # ?path=&encoding=utf8|base64 → {content, size}
  - request: { path: /workspace/file, method: GET }
    handler: !ref read
    inputs:
      path: !cel "request.query.path"
      encoding: !cel "has(request.query.encoding) ? request.query.encoding : 'utf8'"
    returns:
      - status: 200
        content: { application/json: { body: !cel "{'content': result.content, 'size': result.size}" } }
${ANSWERS_500}
  # Every file with its content, always base64: {files: [{path, hash, content, encoding}]}
  - request: { path: /workspace/snapshot, method: GET }
    handler: !ref tree
    inputs:
      exclude: !cel "variables.exclude"
      content: true
      encoding: base64
    returns:
      - status: 200
        content: { application/json: { body: !cel "{'files': result.files.map(f, {'path': f.path, 'hash': f.hash, 'content': f.content, 'encoding': 'base64'})}" } }
${ANSWERS_500}
`;
