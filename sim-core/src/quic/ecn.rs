//! QUIC's use of ECN on the sending side (RFC 9000 §13.4.2): the sender marks its packets
//! ECT(0) while ECN is in use, validates the ECN Counts the peer reports in its ACK frames
//! (§13.4.2.1), stops marking when validation fails (§13.4.2.2), and hands an increase of
//! the ECN-CE count to its congestion controller (RFC 9002 §7.1, B.7 `ProcessECN`).
//!
//! The receiving side is in the packet number spaces (`PnSpace::ecn_received`, counted per
//! packet processed, reported in every ACK frame once one is nonzero, §13.4.1) and in the
//! ACK generation (a CE-marked ack-eliciting packet is acknowledged at once, §13.2.1).

use crate::wire::quic::EcnCounts;

/// The sender's ECN state of one connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EcnValidation {
    /// The connection marks ECT(0) (`ecn = true` and validation has not failed).
    pub marking: bool,
    /// Validation failed (§13.4.2.2): ECN is off for the rest of the connection.
    pub failed: bool,
    /// Per packet number space: packets sent ECT(0).
    pub sent_ect0: [u64; 3],
    /// Per packet number space: the counts of the last ACK frame that passed validation.
    pub peer: [EcnCounts; 3],
    /// ACK frames whose ECN-CE count increased (after validation).
    pub ce_increases: u64,
}

/// What one ACK frame's ECN Counts say ([`EcnValidation::on_ack`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnVerdict {
    /// Nothing to do (no counts, no increase of CE, or ECN not in use).
    Nothing,
    /// The CE count increased by this many packets: a congestion signal.
    Ce(u64),
    /// Validation failed: the sender stops marking.
    Failed,
}

impl EcnValidation {
    /// A sender that marks ECT(0) when `enabled`.
    pub fn new(enabled: bool) -> Self {
        EcnValidation {
            marking: enabled,
            ..Default::default()
        }
    }

    /// One packet of space `space` went out, marked ECT(0) if [`EcnValidation::marking`].
    pub fn on_sent(&mut self, space: usize) {
        if self.marking {
            self.sent_ect0[space] += 1;
        }
    }

    /// An ACK frame of space `space` that increased the largest acknowledged packet
    /// number (validation is skipped otherwise: §13.4.2.1 "SHOULD NOT apply this
    /// validation process if it is processing an ACK frame that does not increase the
    /// largest acknowledged packet number") newly acknowledged `newly_ect0` packets sent
    /// ECT(0), and carried `counts` (an ACK frame of type 0x03) or none (0x02).
    pub fn on_ack(
        &mut self,
        space: usize,
        newly_ect0: u64,
        counts: Option<&EcnCounts>,
    ) -> EcnVerdict {
        if self.failed || self.sent_ect0[space] == 0 {
            return EcnVerdict::Nothing;
        }
        let Some(c) = counts else {
            // §13.4.2.1: newly acknowledging ECT packets without ECN counts fails.
            return if newly_ect0 > 0 {
                self.fail()
            } else {
                EcnVerdict::Nothing
            };
        };
        let prev = self.peer[space];
        let grew = |now: u64, before: u64| now as i128 - before as i128;
        // §13.4.2.1: the increase of ECT(0) + ECN-CE covers the newly acknowledged
        // packets sent ECT(0); no count exceeds what was sent with its codepoint (this
        // sender never sends ECT(1)); counts never go down.
        if grew(c.ect0, prev.ect0) + grew(c.ce, prev.ce) < newly_ect0 as i128
            || c.ect0 > self.sent_ect0[space]
            || c.ect1 > 0
            || c.ect0 < prev.ect0
            || c.ce < prev.ce
        {
            return self.fail();
        }
        self.peer[space] = *c;
        if c.ce > prev.ce {
            self.ce_increases += 1;
            EcnVerdict::Ce(c.ce - prev.ce)
        } else {
            EcnVerdict::Nothing
        }
    }

    fn fail(&mut self) -> EcnVerdict {
        // §13.4.2.2: "If validation fails, then the endpoint MUST disable ECN. It stops
        // setting the ECT codepoint in IP packets that it sends".
        self.failed = true;
        self.marking = false;
        EcnVerdict::Failed
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(ect0: u64, ect1: u64, ce: u64) -> EcnCounts {
        EcnCounts { ect0, ect1, ce }
    }

    #[test]
    fn validation_rules() {
        let mut v = EcnValidation::new(true);
        for _ in 0..10 {
            v.on_sent(2);
        }
        // 4 newly acked ECT(0): 3 arrived ECT(0), 1 CE.
        assert_eq!(v.on_ack(2, 4, Some(&counts(3, 0, 1))), EcnVerdict::Ce(1));
        // No increase of CE.
        assert_eq!(v.on_ack(2, 2, Some(&counts(5, 0, 1))), EcnVerdict::Nothing);
        assert!(v.marking);
        // Too few counted for the packets newly acknowledged (bleached on the path).
        assert_eq!(v.on_ack(2, 3, Some(&counts(6, 0, 1))), EcnVerdict::Failed);
        assert!(!v.marking && v.failed);
        v.on_sent(2);
        assert_eq!(v.sent_ect0[2], 10, "no longer marking");

        // More ECT(0) reported than sent, ECT(1) never sent, counts missing.
        for bad in [Some(counts(11, 0, 0)), Some(counts(1, 1, 0)), None] {
            let mut v = EcnValidation::new(true);
            for _ in 0..10 {
                v.on_sent(2);
            }
            assert_eq!(v.on_ack(2, 1, bad.as_ref()), EcnVerdict::Failed, "{bad:?}");
        }
        // ECN off: nothing is ever counted or judged.
        let mut v = EcnValidation::new(false);
        v.on_sent(2);
        assert_eq!(v.on_ack(2, 0, None), EcnVerdict::Nothing);
        assert_eq!(v.sent_ect0, [0; 3]);
    }
}
