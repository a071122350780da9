//! The AWS deployment's tools. The account, plan and usage commands are
//! the embedded CLI's (`marketlab::operator`) over the DynamoDB adapters;
//! only the dead-letter commands are AWS's own.

pub mod dlq;
pub mod settings;
