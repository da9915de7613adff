// Module hooks of recordResolvedModules (resolved-modules.ts): every URL the module graph resolves is posted to the main
// thread, so the child can report which packages an import really loaded.
let port;

export function initialize(data) {
  port = data.port;
}

export async function resolve(specifier, context, nextResolve) {
  const result = await nextResolve(specifier, context);
  port.postMessage(result.url);
  return result;
}
