//! E-ARK CSIP/SIP/AIP 2.2 information packages made from a package (`webaip export eark`), and
//! the check of the CSIP 2.2 rules (`webaip validate --profile eark-csip`).
