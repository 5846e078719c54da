//! Multi-process integration tests live in tests/tests/.
