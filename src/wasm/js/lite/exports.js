// The lite surface from the lite glue, by name, for the three lite entries:
// the glue also exports the class of the jobs its listings run as
// (src/wasm/lite.rs), which is no API.
export {
  decodeCatalogPayload,
  defaultName,
  errorCodeList,
  isValidName,
  listDescendants,
  listTree,
  MemoryStore,
  parseAgentRef,
  projectCatalog,
  resolveName,
  start,
  validateName,
} from './subagent_tree_lite.js';
