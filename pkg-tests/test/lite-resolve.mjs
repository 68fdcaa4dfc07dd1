// The resolve hook lite-entry.mjs registers: `subagent-tree` -> `subagent-tree/lite`.
export async function resolve(specifier, context, next) {
  return next(specifier === 'subagent-tree' ? 'subagent-tree/lite' : specifier, context);
}
