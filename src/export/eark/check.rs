//! The CSIP 2.2 rules (to come).
