//! Properties of every allowance over random consumption sequences (policies, windows,
//! bounds, MSS, RTTs and consumption timings): the advertised limit and the window never
//! shrink, the window never exceeds the upper bound, and an update is advertised exactly
//! when the policy's rule says, with the size the rule says.

use super::*;
use proptest::prelude::*;

fn kind() -> impl Strategy<Value = AllowanceKind> {
    prop::sample::select(AllowanceKind::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn allowances_follow_their_rule(
        kind in kind(),
        initial in 1u64..200_000,
        bound_factor in 1u64..64,
        mss in 0u64..2000,
        srtt_ms in 0u64..300,
        steps in prop::collection::vec((0u64..400, 0u64..100_000, any::<bool>()), 1..200),
    ) {
        let max_window = initial.saturating_mul(bound_factor);
        let params = AllowanceParams { initial_window: initial, max_window, mss };
        let mut a = build(kind, params);
        let srtt = SimDuration::from_millis(srtt_ms);
        let (mut now, mut limit, mut consumed) = (SimTime::ZERO, initial, 0u64);
        let mut last_update: Option<SimTime> = None;
        let mut first_seen: Option<SimTime> = None;
        let mut stream_window = initial;
        for (dt_ms, n, follow) in steps {
            now += SimDuration::from_millis(dt_ms);
            // The peer never sends past the limit, so consumption stays within it.
            consumed = (consumed + n).min(limit);
            if kind.grows() && follow {
                // A connection-level allowance is told a stream's window.
                stream_window = stream_window.saturating_mul(2).min(max_window);
                let w0 = a.window();
                a.on_stream_window(stream_window);
                let expected = w0.max((stream_window * 3 / 2).min(max_window));
                prop_assert_eq!(a.window(), expected);
            }
            let w0 = a.window();
            let input = AllowanceInput {
                now,
                srtt,
                last_update,
                consumed,
                received: consumed,
                limit,
            };
            first_seen.get_or_insert(now);
            let available = limit - consumed;
            let triggers = match kind {
                AllowanceKind::ImprovedStatic => available < w0 / 2 + mss,
                _ => available < w0 / 2,
            };
            let prev = last_update.or(first_seen).expect("seen");
            let in_time = srtt_ms > 0 && now.saturating_since(prev) < srtt.saturating_mul(2);
            let out = a.update(&input);
            let w1 = a.window();
            // Windows never shrink and never pass the bound.
            prop_assert!(w1 >= w0, "{kind:?}: window shrank {w0} -> {w1}");
            prop_assert!(w1 <= max_window.max(initial), "{kind:?}: window {w1} > bound {max_window}");
            // The window grows exactly at a triggered update under the 2-RTT rule, by the
            // policy's factor.
            let grown = match kind {
                AllowanceKind::Autotune => (w0 * 2).min(max_window),
                AllowanceKind::FastAutotune => {
                    (w0 * FastAutotuneAllowance::factor(w0, max_window)).min(max_window)
                }
                _ => w0,
            };
            let expect_w1 = if triggers && in_time { grown } else { w0 };
            prop_assert_eq!(w1, expect_w1, "{:?} window", kind);
            match out {
                Some(l) => {
                    prop_assert!(triggers, "{kind:?}: update without its trigger");
                    prop_assert_eq!(l, consumed + w1, "refill to consumed + window");
                    prop_assert!(l > limit, "limits only grow");
                    limit = l;
                    last_update = Some(now);
                }
                None => prop_assert!(
                    !triggers || consumed + w1 <= limit,
                    "{kind:?}: trigger without an update"
                ),
            }
        }
    }
}
