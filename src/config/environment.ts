/**
 * The process environment is read here and nowhere else: an entry point takes one
 * copy and hands it to the loaders of src/config, which shape it; everything past them sees only
 * the shaped settings. A copy, so that `npm start` can add what its children need (the port it
 * got, the simulated cluster's kubeconfig) without changing its own environment.
 */
export function currentEnv(): NodeJS.ProcessEnv {
  return { ...process.env };
}
