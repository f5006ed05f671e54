//! The connection's deadlines in one table (quinn-proto keeps a `TimerTable` the same
//! way): [`Connection::poll_timeout`](super::connection::Connection::poll_timeout) is the
//! table's minimum and
//! [`Connection::handle_timeout`](super::connection::Connection::handle_timeout) asks it
//! which timers expired.
//!
//! The table is a snapshot taken from the state owners (the packet number spaces' ACK
//! deadlines, [`Recovery`](super::recovery::Recovery)'s loss-detection timer, the pacer,
//! the close state, the workload's application reader passed in), so no deadline is kept
//! twice. The per-call paths (`poll_timeout` after every service, `handle_timeout` at
//! every timer) read the same owners without building the table, and builds with debug
//! assertions check them against it on every call.

use crate::time::SimTime;

/// One of the connection's timers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Timer {
    /// Idle timeout (RFC 9000 §10.1).
    Idle,
    /// Delayed ACK of the Initial space (RFC 9000 §13.2.1; never armed: not delayed).
    AckInitial,
    /// Delayed ACK of the Handshake space (never armed: not delayed).
    AckHandshake,
    /// Delayed ACK of the application-data space (max_ack_delay, RFC 9000 §13.2.1).
    AckData,
    /// Loss detection or PTO (RFC 9002 §6.2).
    LossDetection,
    /// The workload's application reader wants its
    /// [`AppReader::on_deadline`](crate::transport::stream::AppReader::on_deadline).
    Reader,
    /// The pacer releases the next datagram (RFC 9002 §7.7).
    Pacing,
    /// Path validation is abandoned (RFC 9000 §8.2.4).
    PathValidation,
    /// No PATH_RESPONSE came for the last PATH_CHALLENGE: a new challenge is owed
    /// (RFC 9000 §8.2.1, §13.3).
    PathChallenge,
    /// End of the closing or draining period (RFC 9000 §10.2).
    Close,
}

impl Timer {
    /// Every timer, in table order.
    pub const ALL: [Timer; 10] = [
        Timer::Idle,
        Timer::AckInitial,
        Timer::AckHandshake,
        Timer::AckData,
        Timer::LossDetection,
        Timer::Reader,
        Timer::Pacing,
        Timer::PathValidation,
        Timer::PathChallenge,
        Timer::Close,
    ];

    /// The ACK-delay timer of packet number space `i` (0 Initial, 1 Handshake, 2 data).
    pub fn ack(i: usize) -> Timer {
        [Timer::AckInitial, Timer::AckHandshake, Timer::AckData][i]
    }
}

/// The deadline of every timer (`None`: not armed).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TimerTable {
    deadlines: [Option<SimTime>; 10],
}

impl TimerTable {
    /// Arms (`Some`) or disarms (`None`) `timer`.
    pub fn set(&mut self, timer: Timer, at: Option<SimTime>) {
        self.deadlines[timer as usize] = at;
    }

    /// The deadline of `timer`.
    pub fn get(&self, timer: Timer) -> Option<SimTime> {
        self.deadlines[timer as usize]
    }

    /// `timer` is armed and due at `now`.
    pub fn expired(&self, timer: Timer, now: SimTime) -> bool {
        self.get(timer).is_some_and(|t| t <= now)
    }

    /// The earliest deadline.
    pub fn next(&self) -> Option<SimTime> {
        self.deadlines.iter().flatten().min().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::time::SimDuration;

    #[test]
    fn next_is_the_minimum_of_armed_timers() {
        let mut t = TimerTable::default();
        assert_eq!(t.next(), None);
        let at = |ms| SimTime::ZERO + SimDuration::from_millis(ms);
        t.set(Timer::Idle, Some(at(30_000)));
        t.set(Timer::Pacing, Some(at(5)));
        t.set(Timer::ack(2), Some(at(25)));
        assert_eq!(t.next(), Some(at(5)));
        assert!(t.expired(Timer::AckData, at(25)) && !t.expired(Timer::Reader, at(99)));
        t.set(Timer::Pacing, None);
        assert_eq!(t.next(), Some(at(25)));
        assert_eq!(Timer::ALL.len(), 10);
    }
}
