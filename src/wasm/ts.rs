//! The TypeScript names of the bridge's option arguments. The hand-written
//! types themselves are files (`js/types/*.d.ts`, the `SubagentError` class
//! in `js/index.d.ts`) that tsc checks and the build copies into the package;
//! scripts/public-types.mjs makes the generated `.d.ts` import them.

use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// `options?: CallOptions` (an extern type so the parameter is optional in TypeScript).
    #[wasm_bindgen(typescript_type = "CallOptions")]
    pub type CallOptionsArg;
    #[wasm_bindgen(typescript_type = "ProjectCatalogOptions")]
    pub type ProjectCatalogOptionsArg;
    #[wasm_bindgen(typescript_type = "ReadOptions")]
    pub type ReadOptionsArg;
    #[wasm_bindgen(typescript_type = "ReadManyOptions")]
    pub type ReadManyOptionsArg;
    #[wasm_bindgen(typescript_type = "MemoryStoreOptions")]
    pub type MemoryStoreOptionsArg;
}

/// An optional options argument as a plain value (`undefined` when absent).
pub fn opt<T: Into<JsValue>>(options: Option<T>) -> JsValue {
    options.map_or(JsValue::UNDEFINED, Into::into)
}
