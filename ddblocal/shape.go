package ddblocal

// maxPlainMembers bounds the list elements and map members a request may
// hold outside its attribute values (table names, key schemas, index
// definitions, TransactItems, AttributesToGet, ExpressionAttributeNames,
// and so on). encoding/json turns each into a struct or map entry, and an
// empty JSON object of 2 bytes can become a struct of hundreds, so
// without a count a small body could cost a hundred times its size.
// DynamoDB's own limits on these lists are far lower (100 TransactItems,
// 100 keys in a BatchGetItem, 25 writes in a BatchWriteItem).
const maxPlainMembers = 10_000

// plainMemberBytes bounds what decoding one such member costs (its
// struct, slice growth included); FuzzDecodeRequest checks it.
const plainMemberBytes = 640
