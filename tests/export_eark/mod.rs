//! E-ARK export and its check (to come).
