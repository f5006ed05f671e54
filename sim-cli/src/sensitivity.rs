//! Sensitivity verdicts: a claim judged under every combination of a scenario's unstated
//! parameters (`[[paper.unstated]]`) is *robust* when every combination gives it the same
//! class of verdict, and otherwise *depends on* the parameters whose alternatives alone
//! change it.
//!
//! Classes: *reproduced* (any verdict starting "reproduced", or a ranking that holds at
//! every point, or a gap that grows), *direction only*, *partly* (a ranking that holds at
//! some points only), *not reproduced*, and *no value* (no run of a point reached the
//! metric). A parameter `i` matters to a claim when two combinations that differ only in
//! `i`'s alternative give the claim different classes; a claim whose class changes at all
//! has at least one such parameter (walk from one combination to the other one parameter
//! at a time: some step changes the class).

use std::fmt;

/// The class of a verdict, what robustness compares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    Reproduced,
    DirectionOnly,
    Partly,
    NotReproduced,
    NoValue,
}

impl Class {
    /// The class of an effect's verdict text (`verdict`, `direction_verdict`).
    pub fn of_verdict(v: &str) -> Class {
        if v.starts_with("reproduced") {
            Class::Reproduced
        } else if v == "direction only" {
            Class::DirectionOnly
        } else {
            Class::NotReproduced
        }
    }

    /// The class of a ranking that holds at `held` of `judged` points.
    pub fn of_ranking(held: usize, judged: usize) -> Class {
        match (held, judged) {
            (_, 0) => Class::NoValue,
            (h, j) if h == j => Class::Reproduced,
            (0, _) => Class::NotReproduced,
            _ => Class::Partly,
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Class::Reproduced => "reproduced",
            Class::DirectionOnly => "direction only",
            Class::Partly => "partly reproduced",
            Class::NotReproduced => "not reproduced",
            Class::NoValue => "no value",
        })
    }
}

/// A claim's verdict over the combinations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judgement {
    /// Every combination gives this class.
    Robust(Class),
    /// The class changes with these unstated parameters (indices into `[[paper.unstated]]`,
    /// ascending).
    Depends(Vec<usize>),
}

/// Judges one claim: `classes[c]` is its class under `combinations[c]` (one alternative
/// index per unstated parameter, as [`sim_core::scenario::paper::Paper::combinations`]).
pub fn judge(combinations: &[Vec<usize>], classes: &[Class]) -> Judgement {
    let Some(first) = classes.first() else {
        return Judgement::Robust(Class::NoValue);
    };
    if classes.iter().all(|c| c == first) {
        return Judgement::Robust(*first);
    }
    let dims = combinations.first().map_or(0, Vec::len);
    let matters = (0..dims)
        .filter(|&i| {
            combinations.iter().enumerate().any(|(a, ca)| {
                combinations.iter().enumerate().any(|(b, cb)| {
                    classes[a] != classes[b] && (0..dims).all(|d| d == i || ca[d] == cb[d])
                })
            })
        })
        .collect();
    Judgement::Depends(matters)
}

/// A judgement in words: `reproduced (robust)`, `depends on loss placement`.
pub fn judgement_text(j: &Judgement, names: &[String]) -> String {
    match j {
        Judgement::Robust(c) => format!("{c} (robust)"),
        Judgement::Depends(on) => format!(
            "depends on {}",
            on.iter()
                .filter_map(|&i| names.get(i).map(String::as_str))
                .collect::<Vec<_>>()
                .join(" and ")
        ),
    }
}

/// An experiment's sensitivity in a line, from its claims' judgements: `reproduced
/// (robust)` / `not reproduced (robust)` when every claim is robustly so, `robust: k of n
/// claims reproduced` when all are robust but mixed, else `depends on X: k of n claims`.
pub fn summary(judgements: &[Judgement], names: &[String]) -> String {
    if judgements.is_empty() {
        return "no claim to judge".into();
    }
    let n = judgements.len();
    let mut on: Vec<usize> = Vec::new();
    let mut depending = 0;
    for j in judgements {
        if let Judgement::Depends(d) = j {
            depending += 1;
            on.extend(d);
        }
    }
    on.sort_unstable();
    on.dedup();
    if depending > 0 {
        let text = judgement_text(&Judgement::Depends(on), names);
        return format!("{text}: {depending} of {n} claims");
    }
    let reproduced = judgements
        .iter()
        .filter(|j| **j == Judgement::Robust(Class::Reproduced))
        .count();
    let not = judgements
        .iter()
        .filter(|j| **j == Judgement::Robust(Class::NotReproduced))
        .count();
    if reproduced == n {
        "reproduced (robust)".into()
    } else if not == n {
        "not reproduced (robust)".into()
    } else {
        format!("robust: {reproduced} of {n} claims reproduced")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Class::*;

    fn grid(dims: &[usize]) -> Vec<Vec<usize>> {
        let mut out = vec![vec![]];
        for &n in dims {
            out = out
                .into_iter()
                .flat_map(|c| {
                    (0..n).map(move |i| {
                        let mut c = c.clone();
                        c.push(i);
                        c
                    })
                })
                .collect();
        }
        out
    }

    #[test]
    fn classes_of_verdicts_and_rankings() {
        assert_eq!(Class::of_verdict("reproduced"), Reproduced);
        assert_eq!(Class::of_verdict("reproduced (no effect)"), Reproduced);
        assert_eq!(Class::of_verdict("reproduced (direction)"), Reproduced);
        assert_eq!(Class::of_verdict("direction only"), DirectionOnly);
        assert_eq!(Class::of_verdict("not reproduced"), NotReproduced);
        assert_eq!(Class::of_ranking(5, 5), Reproduced);
        assert_eq!(Class::of_ranking(2, 5), Partly);
        assert_eq!(Class::of_ranking(0, 5), NotReproduced);
        assert_eq!(Class::of_ranking(0, 0), NoValue);
    }

    #[test]
    fn one_parameter_robust_or_depends() {
        let c = grid(&[3]);
        let names = vec!["loss placement".to_string()];
        let j = judge(&c, &[Reproduced, Reproduced, Reproduced]);
        assert_eq!(j, Judgement::Robust(Reproduced));
        assert_eq!(judgement_text(&j, &names), "reproduced (robust)");
        let j = judge(&c, &[NotReproduced; 3]);
        assert_eq!(judgement_text(&j, &names), "not reproduced (robust)");
        let j = judge(&c, &[Reproduced, NotReproduced, Reproduced]);
        assert_eq!(j, Judgement::Depends(vec![0]));
        assert_eq!(judgement_text(&j, &names), "depends on loss placement");
        // Direction only and reproduced are different classes.
        assert_eq!(
            judge(&c, &[Reproduced, DirectionOnly, Reproduced]),
            Judgement::Depends(vec![0])
        );
    }

    #[test]
    fn several_parameters_name_only_those_that_matter() {
        // 2 x 3 grid (first slowest): the class follows the second parameter only.
        let c = grid(&[2, 3]);
        let classes = [
            Reproduced,
            NotReproduced,
            Reproduced,
            Reproduced,
            NotReproduced,
            Reproduced,
        ];
        assert_eq!(judge(&c, &classes), Judgement::Depends(vec![1]));
        // ... the first only.
        let classes = [Reproduced, Reproduced, Reproduced, Partly, Partly, Partly];
        assert_eq!(judge(&c, &classes), Judgement::Depends(vec![0]));
        // ... an interaction: only the combination (1, 2) differs; both matter.
        let mut classes = [Reproduced; 6];
        classes[5] = NotReproduced;
        assert_eq!(judge(&c, &classes), Judgement::Depends(vec![0, 1]));
        let names = vec!["rate".to_string(), "placement".to_string()];
        assert_eq!(
            judgement_text(&judge(&c, &classes), &names),
            "depends on rate and placement"
        );
    }

    #[test]
    fn experiment_summaries() {
        let names = vec!["loss placement".to_string(), "rate".to_string()];
        let r = Judgement::Robust(Reproduced);
        let n = Judgement::Robust(NotReproduced);
        assert_eq!(
            summary(&[r.clone(), r.clone()], &names),
            "reproduced (robust)"
        );
        assert_eq!(
            summary(std::slice::from_ref(&n), &names),
            "not reproduced (robust)"
        );
        assert_eq!(
            summary(
                &[r.clone(), n.clone(), Judgement::Robust(DirectionOnly)],
                &names
            ),
            "robust: 1 of 3 claims reproduced"
        );
        assert_eq!(
            summary(
                &[
                    r,
                    Judgement::Depends(vec![1]),
                    Judgement::Depends(vec![0, 1])
                ],
                &names
            ),
            "depends on loss placement and rate: 2 of 3 claims"
        );
        assert_eq!(summary(&[], &names), "no claim to judge");
    }
}
