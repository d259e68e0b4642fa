// @ts-check
/**
 * Imported first by both Stryker configs. Stryker runs on Bun (`bun --bun`), because Stryker 10
 * refuses Node 20 and Bun reports a newer Node. Under Bun, once Babel (Stryker's instrumenter)
 * wraps the native `Error.prepareStackTrace`, `Error.captureStackTrace` on an object that is not
 * a real Error throws "First argument must be an Error object" (oven-sh/bun#41151); the
 * follow-redirects copy inside Vite does exactly that when the Vitest runner loads. Until Bun
 * fixes it, such objects get V8's format from this hook. Drop it with Node ≥ 22.
 */
if (process.versions.bun && Error.prepareStackTrace) {
  const nativePrepare = Error.prepareStackTrace;
  Error.prepareStackTrace = (error, frames) => {
    try {
      return nativePrepare(error, frames);
    } catch {
      return [String(error), ...frames.map((frame) => `    at ${frame}`)].join("\n");
    }
  };
}
