//! quicsim's browser UI: sim-core compiled to `wasm32-unknown-unknown` with a yew front
//! end (`app`, wasm only) and the browser-independent logic it uses, tested natively:
//! the scenario [`gallery`] (bundled at build time), the parameter [`panel`] generated
//! from the scenario format's field descriptors, and the stepped [`runner`] a web worker
//! drives. Build and serve: `scripts/build-web`, `quicsim serve`.

pub mod capacity;
pub mod charts;
pub mod compare;
pub mod gallery;
pub mod lessons;
pub mod panel;
pub mod runner;
pub mod share;
pub mod slider;
pub mod summary;
pub mod sweepplot;
pub mod timeline;
pub mod whatif;

#[cfg(target_arch = "wasm32")]
mod app;
#[cfg(target_arch = "wasm32")]
mod plots;
#[cfg(target_arch = "wasm32")]
pub mod wasm;
