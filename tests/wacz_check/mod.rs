//! The deep WACZ check (to come).
