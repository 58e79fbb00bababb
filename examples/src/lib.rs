//! Example topologies.
