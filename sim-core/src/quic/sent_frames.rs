//! The retransmittable frames of the connection's sent packets, kept outside the
//! sent-packet records (issue 31 item 1: fixed-size records).
//!
//! A record ([`crate::quic::connection::SentInfo`]) holds a [`SentFrames`] handle, two
//! slot indexes, instead of a vector of its own: the frames live in one [`FrameSlab`] per
//! connection as a singly linked list of slots, in the order the packet carried them
//! (the model requeues a lost packet's information in that order, RFC 9000 §13.3 leaving
//! the order to the sender, and the qlog `packet_lost` event lists it so). A slot freed by an
//! acknowledgement or a loss goes on the slab's free list and carries the next packet's
//! frame, so in steady state a packet's record costs no allocation and no buffer to
//! recycle, and moving a record moves 8 bytes of frame handle, not a vector. Any record
//! can be retired in any order (acknowledgements arrive out of order); a record dropped
//! without retiring its frames would only keep its slots.
//!
//! No output depends on which slots a record's frames occupy: the frames are always read
//! back in order through the handle.

use crate::wire::quic::Frame;

/// No slot (the end of a list, or an empty one).
const NIL: u32 = u32::MAX;

/// A sent packet's retransmittable frames: the first and the last slot of its list in
/// the connection's [`FrameSlab`] (both `NIL`: none). Handles are not shared: each list
/// belongs to one record, and a cloned handle names the same slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentFrames {
    head: u32,
    tail: u32,
}

impl Default for SentFrames {
    fn default() -> Self {
        SentFrames {
            head: NIL,
            tail: NIL,
        }
    }
}

impl SentFrames {
    /// The packet carried no retransmittable frame.
    pub fn is_empty(&self) -> bool {
        self.head == NIL
    }
}

/// One frame and the slot of the next frame of the same packet (`NIL`: the last).
#[derive(Debug)]
struct Slot {
    frame: Frame,
    next: u32,
}

/// The frames of every outstanding sent packet of a connection, as linked slots with a
/// free list (see the module documentation).
#[derive(Debug)]
pub struct FrameSlab {
    slots: Vec<Slot>,
    /// First free slot (`NIL`: none; the free slots are linked through `next`).
    free: u32,
}

impl Default for FrameSlab {
    fn default() -> Self {
        FrameSlab {
            slots: Vec::new(),
            free: NIL,
        }
    }
}

impl FrameSlab {
    /// Appends `frame` to the list of `list`.
    pub(crate) fn push(&mut self, list: &mut SentFrames, frame: Frame) {
        let k = if self.free != NIL {
            let k = self.free;
            let s = &mut self.slots[k as usize];
            self.free = s.next;
            s.frame = frame;
            s.next = NIL;
            k
        } else {
            let k = u32::try_from(self.slots.len()).expect("fewer than 2^32 - 1 frame slots");
            assert!(k != NIL, "fewer than 2^32 - 1 frame slots");
            self.slots.push(Slot { frame, next: NIL });
            k
        };
        if list.tail == NIL {
            list.head = k;
        } else {
            self.slots[list.tail as usize].next = k;
        }
        list.tail = k;
    }

    /// The frames of `list`, in the order they were pushed.
    pub(crate) fn iter(&self, list: SentFrames) -> impl Iterator<Item = &Frame> + '_ {
        let mut k = list.head;
        std::iter::from_fn(move || {
            if k == NIL {
                return None;
            }
            let s = &self.slots[k as usize];
            k = s.next;
            Some(&s.frame)
        })
    }

    /// Takes the first frame of `list` out (its slot is freed), or `None` when the list
    /// is empty. Taking every frame this way retires the list.
    pub(crate) fn pop_front(&mut self, list: &mut SentFrames) -> Option<Frame> {
        if list.head == NIL {
            return None;
        }
        let k = list.head;
        let s = &mut self.slots[k as usize];
        let frame = std::mem::take(&mut s.frame);
        list.head = s.next;
        s.next = self.free;
        self.free = k;
        if list.head == NIL {
            list.tail = NIL;
        }
        Some(frame)
    }

    /// Frees the slots of `list` (its frames are dropped).
    pub(crate) fn release(&mut self, mut list: SentFrames) {
        while self.pop_front(&mut list).is_some() {}
    }

    /// Slots in use (for tests).
    #[cfg(test)]
    pub(crate) fn in_use(&self) -> usize {
        let mut free = 0;
        let mut k = self.free;
        while k != NIL {
            free += 1;
            k = self.slots[k as usize].next;
        }
        self.slots.len() - free
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Lists built, read and retired in any order hold exactly the frames pushed onto
        /// them, in order, as a vector per list would; retired slots are reused.
        #[test]
        fn lists_behave_like_vectors(ops in proptest::collection::vec((0u8..4, 0usize..8, 0u64..1000), 1..300)) {
            let mut slab = FrameSlab::default();
            let mut lists = [SentFrames::default(); 8];
            let mut want: Vec<Vec<Frame>> = vec![Vec::new(); 8];
            for (op, i, x) in ops {
                match op {
                    0 | 1 => {
                        let f = Frame::Stream { id: x % 7, offset: x, len: x + 1, fin: x % 5 == 0 };
                        slab.push(&mut lists[i], f.clone());
                        want[i].push(f);
                    }
                    2 => {
                        let got = slab.pop_front(&mut lists[i]);
                        let w = if want[i].is_empty() { None } else { Some(want[i].remove(0)) };
                        prop_assert_eq!(got, w);
                    }
                    _ => {
                        slab.release(lists[i]);
                        lists[i] = SentFrames::default();
                        want[i].clear();
                    }
                }
                for (l, w) in lists.iter().zip(&want) {
                    prop_assert_eq!(l.is_empty(), w.is_empty());
                    prop_assert!(slab.iter(*l).eq(w.iter()));
                }
                prop_assert_eq!(slab.in_use(), want.iter().map(Vec::len).sum::<usize>());
                let most = want.iter().map(Vec::len).sum::<usize>();
                prop_assert!(slab.slots.len() <= most.max(1) + 300);
            }
        }
    }
}
