//! The deep check of a WACZ file (`webaip validate FILE.wacz`).
