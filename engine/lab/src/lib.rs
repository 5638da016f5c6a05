//! Rulesmith's laboratory: what plays many games on a [`Game`], whichever
//! rule engine runs it (interpreted or compiled).
//!
//! [`playout`] plays random games, [`bot`] holds the bots, [`worlds`] draws the worlds they search in, [`sim`] plays
//! games between bots and computes balance statistics, [`fuzz`] hunts
//! for broken invariants and engine contracts with proptest,
//! [`secrecy`] checks that a secret decision does not show before its
//! reveal, and [`tune`] searches a variant's parameters for the values that
//! meet a designer's targets.

pub mod bot;
pub mod differential;
pub mod fuzz;
pub mod playout;
pub mod rating;
pub mod secrecy;
pub mod sim;
pub mod tune;
pub mod worlds;

pub use rulesmith_core::Game;
