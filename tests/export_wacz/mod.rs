//! WACZ export (to come).
