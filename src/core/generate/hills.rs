//! PLACEHOLDER — being written now.
