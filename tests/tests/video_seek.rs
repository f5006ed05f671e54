//! Every scenario of the project with a seeking `video` workload seeks during playback.
//!
//! Paper 003's loading delay is the time from a seek *during playback* until playback
//! resumes. A `seek_at` earlier than the startup on some path (long delays, loss, a slow
//! first segment) made the "loading delay" a cold start instead; the workload now reports
//! such a seek as `seek_before_playback` with no loading delay. This test runs every
//! scenario file under `scenarios/` whose flows include a `video` workload with a seek and
//! fails if any run's seek came before playback started: over the scenario's own `runs`,
//! and (heavy, in release) over the runs `quicsim reproduce` makes of it (its `[paper]
//! runs`).

use sim_core::config::workload::WorkloadConfig;
use sim_core::study::{Overrides, Study};

/// Every scenario file under `scenarios/`.
fn scenario_files() -> Vec<std::path::PathBuf> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    let mut dirs = vec![root.join("scenarios")];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "toml") {
                files.push(p);
            }
        }
    }
    files.sort();
    files
}

fn seeks(w: Option<&WorkloadConfig>) -> bool {
    matches!(w, Some(WorkloadConfig::Video(v)) if v.seek_at.is_some() || v.seek_after_playback.is_some())
}

#[test]
fn no_video_scenario_seeks_before_playback() {
    check(false);
}

#[test]
#[ignore = "heavy: run in release (CI)"]
fn no_video_scenario_seeks_before_playback_over_the_reproduction_runs() {
    check(true);
}

/// Runs every seeking video scenario: `paper_runs` over its `[paper] runs` (when it has
/// them), else over its own `runs`.
fn check(paper_runs: bool) {
    let mut checked = Vec::new();
    for f in scenario_files() {
        let text = std::fs::read_to_string(&f).unwrap();
        // Trace files (`rate = { trace = ... }`) are read next to the scenario, as the CLI does.
        let dir = f.parent().unwrap().to_path_buf();
        let load = |name: &str| std::fs::read_to_string(dir.join(name)).map_err(|e| e.to_string());
        let s = sim_core::scenario::parse_str_with_traces(&text, &load)
            .unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let video = s
            .points
            .iter()
            .any(|p| p.config.flows.iter().any(|fl| seeks(fl.workload())));
        if !video {
            continue;
        }
        let runs = match s.paper.as_ref().and_then(|p| p.runs) {
            Some(r) if paper_runs => r,
            _ => s.base.runs,
        };
        let study = Study::new(
            s,
            &Overrides {
                runs: Some(runs),
                ..Overrides::default()
            },
        )
        .unwrap();
        let mut seeks_seen = 0;
        for job in study.jobs() {
            let r = sim_core::run(study.config(job), job.seed).unwrap();
            for (i, flow) in r.flows.iter().enumerate() {
                for ep in &flow.endpoints {
                    let Some(v) = ep.workload().and_then(|w| w.video.as_ref()) else {
                        continue;
                    };
                    let at = format!(
                        "{} point {} seed {} flow {i}",
                        f.display(),
                        job.point,
                        job.seed
                    );
                    assert_eq!(
                        v.seek_before_playback, 0,
                        "{at}: the seek came before playback"
                    );
                    if let Some(seek) = v.seek_secs {
                        let start = v
                            .startup_delay_secs
                            .unwrap_or_else(|| panic!("{at}: a seek but no playback"));
                        assert!(
                            start < seek,
                            "{at}: playback from {start} s, seek at {seek} s"
                        );
                        seeks_seen += 1;
                    }
                }
            }
        }
        assert!(seeks_seen > 0, "{}: no run seeked", f.display());
        checked.push(f);
    }
    // The example and paper 003's three video experiments (and their sensitivity runs).
    assert!(checked.len() >= 4, "{checked:?}");
}
