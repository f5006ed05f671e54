//! Nodes, links, routing and the topology builders.
//!
//! Addresses: in `two_hosts` the client is 10.0.0.1 and the server 10.1.0.1; in a dumbbell,
//! client `i` is 10.0.i.1 and server `i` is 10.1.i.1. A handover that changes the IP gives
//! client `i` the next host number (10.0.i.2, 10.0.i.3, ...). Routing is static: each host
//! sends everything on its access link; routers map each host address to an outgoing link.
//!
//! Link names (stable: they name the links' random streams and report rows):
//! `two_hosts`: `forward` (client -> server), `reverse`; dumbbell: `bottleneck_forward`
//! (R1 -> R2), `bottleneck_reverse`, and `pair<i>/client_up`, `pair<i>/client_down`,
//! `pair<i>/server_up`, `pair<i>/server_down`; after handover `k`:
//! `handover<k>/forward` and `handover<k>/reverse`.

use crate::config::{AddressChange, Handover, LinkConfig, Topology};
use crate::link::{Link, LinkId};
use crate::packet::Datagram;
use std::collections::BTreeMap;

/// A host runs endpoints; a router forwards.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeKind {
    /// An end host.
    Host,
    /// A router.
    Router,
}

/// A node of the network.
#[derive(Clone, Debug)]
pub struct Node {
    /// Stable name: `client`, `server`, `client<i>`, `server<i>`, `r1`, `r2`.
    pub name: String,
    /// Host or router.
    pub kind: NodeKind,
    /// The host's current IP (0 for routers).
    pub ip: u32,
    /// Where a host sends everything.
    pub default_route: Option<LinkId>,
    /// Per-destination routes (routers, and hosts directly attached to each other).
    pub routes: BTreeMap<u32, LinkId>,
    /// Endpoints running on this host (indices into the runner's endpoint table).
    pub endpoints: Vec<usize>,
}

/// The nodes and access links of one client/server pair.
#[derive(Clone, Debug)]
pub struct PairNodes {
    /// Client host node.
    pub client: usize,
    /// Server host node.
    pub server: usize,
    /// The node the client's access links attach to (the server in `two_hosts`, R1 in a
    /// dumbbell).
    pub attach: usize,
    /// Current client -> network link.
    pub client_out: LinkId,
    /// Current network -> client link.
    pub client_in: LinkId,
    /// Handovers done so far (for new addresses).
    pub handovers: u32,
}

/// What a handover did.
#[derive(Debug)]
pub struct HandoverEffect {
    /// Packets dropped from the old links.
    pub flushed: Vec<Datagram>,
    /// The client host node.
    pub client: usize,
    /// Address effect.
    pub address: AddressChange,
    /// The client's new IP (equal to the old one unless `address = ip`).
    pub new_ip: u32,
}

/// The whole network.
pub struct Network {
    /// All nodes.
    pub nodes: Vec<Node>,
    /// All links, including detached ones (kept for their reports).
    pub links: Vec<Link>,
    /// Pairs, in order.
    pub pairs: Vec<PairNodes>,
    seed: u64,
    handovers_done: usize,
}

/// IP of client `i`, host number `h` (1 = initial).
pub const fn client_ip(pair: usize, h: u32) -> u32 {
    (10 << 24) | ((pair as u32 & 0xff) << 8) | (h & 0xff)
}
/// IP of server `i`.
pub const fn server_ip(pair: usize) -> u32 {
    (10 << 24) | (1 << 16) | ((pair as u32 & 0xff) << 8) | 1
}

impl Network {
    fn add_node(&mut self, name: String, kind: NodeKind, ip: u32) -> usize {
        self.nodes.push(Node {
            name,
            kind,
            ip,
            default_route: None,
            routes: BTreeMap::new(),
            endpoints: Vec::new(),
        });
        self.nodes.len() - 1
    }

    fn add_link(&mut self, name: &str, from: usize, to: usize, cfg: &LinkConfig) -> LinkId {
        self.links.push(Link::new(name, from, to, cfg, self.seed));
        self.links.len() - 1
    }

    /// Builds the network of `topo`; link random streams derive from `seed`.
    pub fn build(topo: &Topology, seed: u64) -> Network {
        let mut n = Network {
            nodes: Vec::new(),
            links: Vec::new(),
            pairs: Vec::new(),
            seed,
            handovers_done: 0,
        };
        match topo {
            Topology::TwoHosts {
                forward, reverse, ..
            } => {
                let c = n.add_node("client".into(), NodeKind::Host, client_ip(0, 1));
                let s = n.add_node("server".into(), NodeKind::Host, server_ip(0));
                let f = n.add_link("forward", c, s, forward);
                let r = n.add_link("reverse", s, c, reverse);
                n.nodes[c].default_route = Some(f);
                n.nodes[s].default_route = Some(r);
                n.pairs.push(PairNodes {
                    client: c,
                    server: s,
                    attach: s,
                    client_out: f,
                    client_in: r,
                    handovers: 0,
                });
            }
            Topology::Dumbbell {
                pairs,
                bottleneck_forward,
                bottleneck_reverse,
                ..
            } => {
                let r1 = n.add_node("r1".into(), NodeKind::Router, 0);
                let r2 = n.add_node("r2".into(), NodeKind::Router, 0);
                let bf = n.add_link("bottleneck_forward", r1, r2, bottleneck_forward);
                let br = n.add_link("bottleneck_reverse", r2, r1, bottleneck_reverse);
                for (i, p) in pairs.iter().enumerate() {
                    let c = n.add_node(format!("client{i}"), NodeKind::Host, client_ip(i, 1));
                    let s = n.add_node(format!("server{i}"), NodeKind::Host, server_ip(i));
                    let cu = n.add_link(&format!("pair{i}/client_up"), c, r1, &p.client_up);
                    let cd = n.add_link(&format!("pair{i}/client_down"), r1, c, &p.client_down);
                    let su = n.add_link(&format!("pair{i}/server_up"), s, r2, &p.server_up);
                    let sd = n.add_link(&format!("pair{i}/server_down"), r2, s, &p.server_down);
                    n.nodes[c].default_route = Some(cu);
                    n.nodes[s].default_route = Some(su);
                    let (cip, sip) = (client_ip(i, 1), server_ip(i));
                    n.nodes[r1].routes.insert(cip, cd);
                    n.nodes[r1].routes.insert(sip, bf);
                    n.nodes[r2].routes.insert(sip, sd);
                    n.nodes[r2].routes.insert(cip, br);
                    n.pairs.push(PairNodes {
                        client: c,
                        server: s,
                        attach: r1,
                        client_out: cu,
                        client_in: cd,
                        handovers: 0,
                    });
                }
            }
        }
        n
    }

    /// The link a packet for `dst_ip` leaves `node` on, if any.
    pub fn route(&self, node: usize, dst_ip: u32) -> Option<LinkId> {
        let n = &self.nodes[node];
        match n.kind {
            NodeKind::Host => n.default_route,
            NodeKind::Router => n.routes.get(&dst_ip).copied(),
        }
    }

    /// Switches a client to new access links. The old links are flushed (their packets
    /// dropped with reason `handover`) and stay in `links` for their reports.
    pub fn handover(&mut self, h: &Handover) -> HandoverEffect {
        let k = self.handovers_done;
        self.handovers_done += 1;
        let pair = self.pairs[h.pair].clone();
        let mut flushed = self.links[pair.client_out].flush();
        flushed.extend(self.links[pair.client_in].flush());
        let old_ip = self.nodes[pair.client].ip;
        let new_ip = if h.address == AddressChange::Ip {
            client_ip(h.pair, pair.handovers + 2)
        } else {
            old_ip
        };
        let out = self.add_link(
            &format!("handover{k}/forward"),
            pair.client,
            pair.attach,
            &h.forward,
        );
        let inn = self.add_link(
            &format!("handover{k}/reverse"),
            pair.attach,
            pair.client,
            &h.reverse,
        );
        self.nodes[pair.client].default_route = Some(out);
        self.nodes[pair.client].ip = new_ip;
        let attach = &mut self.nodes[pair.attach];
        match attach.kind {
            NodeKind::Host => attach.default_route = Some(inn),
            NodeKind::Router => {
                attach.routes.remove(&old_ip);
                attach.routes.insert(new_ip, inn);
            }
        }
        if new_ip != old_ip {
            // The far router must route the new address towards the client side too.
            for node in 0..self.nodes.len() {
                if node == pair.attach || self.nodes[node].kind != NodeKind::Router {
                    continue;
                }
                if let Some(l) = self.nodes[node].routes.remove(&old_ip) {
                    self.nodes[node].routes.insert(new_ip, l);
                }
            }
            // In two_hosts the server sends on its default route, which is now `inn`;
            // packets to the old address arrive at the client and find no endpoint.
        }
        let p = &mut self.pairs[h.pair];
        p.client_out = out;
        p.client_in = inn;
        p.handovers += 1;
        HandoverEffect {
            flushed,
            client: pair.client,
            address: h.address,
            new_ip,
        }
    }
}
