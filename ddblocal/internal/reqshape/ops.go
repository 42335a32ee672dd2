package reqshape

// The shapes of DynamoDB's requests, from its API model: member types,
// DynamoDB's class names, and the constraints in the order DynamoDB
// reports them.

// comparisonOperators is the enum of ComparisonOperator.
var comparisonOperators = []string{"IN", "NULL", "BETWEEN", "LT", "NOT_CONTAINS", "EQ", "GT", "NOT_NULL", "NE", "LE", "BEGINS_WITH", "GE", "CONTAINS"}

// tableName is the TableName of an operation on an existing table: a
// name, or (since 2024) the table's ARN.
func tableName(c ...Check) Field {
	checks := append([]Check{notNull()}, c...)
	checks = append(checks, nameOnly(namePattern()), nameOnly(minLen(3)), nameOnly(maxLen(255)), arnOnly(maxLen(1024)))
	return field("TableName", str, checks...)
}

// controlTableName is the TableName of DescribeTable, DeleteTable and
// the TTL operations, which DynamoDB requires and measures first.
func controlTableName() Field {
	return field("TableName", str, required(), nameOnly(tableNameLen()), nameOnly(namePattern()), arnOnly(maxLen(1024)))
}

var (
	rcc          = field("ReturnConsumedCapacity", str, oneOf("INDEXES", "TOTAL", "NONE"))
	ricm         = field("ReturnItemCollectionMetrics", str, oneOf("SIZE", "NONE"))
	names        = field("ExpressionAttributeNames", mapOf("java.lang.String", str))
	vals         = field("ExpressionAttributeValues", attrMap)
	condOp       = field("ConditionalOperator", str, oneOf("OR", "AND"))
	attrsToGet   = field("AttributesToGet", list(str), minLen(1), maxLen(255))
	returnValues = field("ReturnValues", str, oneOf("ALL_NEW", "UPDATED_OLD", "ALL_OLD", "NONE", "UPDATED_NEW"))
	rvOnFailure  = field("ReturnValuesOnConditionCheckFailure", str, oneOf("ALL_OLD", "NONE"))

	expected = field("Expected", mapOf(modelPrefix+"ExpectedAttributeValue", structure("ExpectedAttributeValue",
		field("AttributeValueList", list(attr)),
		field("ComparisonOperator", str, oneOf(comparisonOperators...)),
		field("Exists", boolean),
		field("Value", attr),
	)))

	condition = structure("Condition",
		field("AttributeValueList", list(attr)),
		field("ComparisonOperator", str, notNull(), oneOf(comparisonOperators...)),
	)
	// keyCondition lists ComparisonOperator first, as DynamoDB's model
	// of KeyConditions does.
	keyCondition = structure("Condition",
		field("ComparisonOperator", str, notNull(), oneOf(comparisonOperators...)),
		field("AttributeValueList", list(attr)),
	)

	throughput = structure("ProvisionedThroughput",
		field("WriteCapacityUnits", long, notNull(), atLeast(1)),
		field("ReadCapacityUnits", long, notNull(), atLeast(1)),
	)
	keySchemaElem = structure("KeySchemaElement",
		field("AttributeName", str, notNull()),
		field("KeyType", str, notNull(), oneOf("HASH", "RANGE")),
	)
	indexKeySchemaElem = structure("KeySchemaElement",
		field("AttributeName", str, notNull()),
		field("KeyType", str, notNull()),
	)
	projection = structure("Projection",
		field("ProjectionType", str, oneOf("ALL", "INCLUDE", "KEYS_ONLY")),
		field("NonKeyAttributes", list(str), minLen(1)),
	)
	streamSpec = structure("StreamSpecification",
		field("StreamEnabled", boolean),
		field("StreamViewType", str, oneOf("NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY")),
	)
	indexName = []Check{notNull(), namePattern(), minLen(3), maxLen(255)}
)

// Ops are the shapes of the requests of DynamoDB's operations ddblocal
// serves, by operation name.
var Ops = map[string]*Shape{
	"GetItem": structure("GetItemInput",
		rcc, attrsToGet, tableName(),
		field("Key", attrMap, notNull()),
		field("ConsistentRead", boolean),
		field("ProjectionExpression", str),
		names,
	),
	"PutItem": structure("PutItemInput",
		rcc, tableName(),
		field("Item", attrMap, notNull()),
		condOp, expected, returnValues, ricm,
		field("ConditionExpression", str),
		vals, names, rvOnFailure,
	),
	"DeleteItem": structure("DeleteItemInput",
		rcc, tableName(), returnValues, ricm,
		field("Key", attrMap, notNull()),
		condOp, expected,
		field("ConditionExpression", str),
		vals, names, rvOnFailure,
	),
	"UpdateItem": structure("UpdateItemInput",
		rcc, tableName(), ricm, returnValues,
		field("Key", attrMap, notNull()),
		condOp, expected,
		field("AttributeUpdates", mapOf(modelPrefix+"AttributeValueUpdate", structure("AttributeValueUpdate",
			field("Action", str, oneOf("ADD", "PUT", "DELETE")),
			field("Value", attr),
		))),
		field("ConditionExpression", str),
		field("UpdateExpression", str),
		vals, names, rvOnFailure,
	),
	"Query": structure("QueryInput",
		field("Select", str, oneOf("SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")),
		field("IndexName", str, namePattern(), minLen(3), maxLen(255)),
		rcc,
		field("QueryFilter", mapOf(modelPrefix+"Condition", condition)),
		tableName(), condOp, attrsToGet,
		field("Limit", integer, atLeast(1)),
		field("KeyConditions", mapOf(modelPrefix+"Condition", keyCondition)),
		field("ExclusiveStartKey", attrMap),
		field("ConsistentRead", boolean),
		field("ScanIndexForward", boolean),
		field("KeyConditionExpression", str),
		field("FilterExpression", str),
		field("ProjectionExpression", str),
		vals, names,
	),
	"Scan": structure("ScanInput",
		field("Select", str, oneOf("SPECIFIC_ATTRIBUTES", "COUNT", "ALL_ATTRIBUTES", "ALL_PROJECTED_ATTRIBUTES")),
		field("IndexName", str, namePattern(), minLen(3), maxLen(255)),
		field("TotalSegments", integer, atLeast(1), atMost(1000000)),
		rcc, tableName(), condOp,
		field("ScanFilter", mapOf(modelPrefix+"Condition", condition)),
		field("Segment", integer, atLeast(0), atMost(999999)),
		field("Limit", integer, atLeast(1)),
		attrsToGet,
		field("ExclusiveStartKey", attrMap),
		field("ConsistentRead", boolean),
		field("FilterExpression", str),
		field("ProjectionExpression", str),
		vals, names,
	),
	"BatchGetItem": structure("BatchGetItemInput",
		rcc,
		field("RequestItems", mapOf(modelPrefix+"KeysAndAttributes", structure("KeysAndAttributes",
			field("Keys", &Shape{Kind: List, Elem: &Field{Name: "member", Shape: &Shape{Kind: AttrMap, Class: attrMap.Class, Param: true}}},
				notNull(), minLen(1), maxLen(100)),
			attrsToGet,
			field("ConsistentRead", boolean),
			field("ProjectionExpression", str),
			names,
		)), notNull(), minLen(1), keys(maxLen(255), minLen(3), namePattern())),
	),
	"BatchWriteItem": structure("BatchWriteItemInput",
		rcc, ricm,
		field("RequestItems", mapOf("java.util.List<"+modelPrefix+"WriteRequest>", &Shape{Kind: List, Param: true, Elem: &Field{Name: "member", Shape: structure("WriteRequest",
			field("DeleteRequest", structure("DeleteRequest", field("Key", attrMap, notNull()))),
			field("PutRequest", structure("PutRequest", field("Item", attrMap, notNull()))),
		)}}), notNull(), minLen(1), keys(maxLen(255), minLen(3), namePattern()), values(maxLen(25), minLen(1))),
	),
	"CreateTable": structure("CreateTableInput",
		field("AttributeDefinitions", list(structure("AttributeDefinition",
			field("AttributeName", str, notNull()),
			field("AttributeType", str, notNull(), oneOf("B", "N", "S")),
		)), notNull()),
		field("TableName", str, required(), tableNameLen(), namePattern()),
		field("BillingMode", str, oneOf("PROVISIONED", "PAY_PER_REQUEST")),
		field("ProvisionedThroughput", throughput),
		field("KeySchema", list(keySchemaElem), notNull(), minLen(1), maxLen(2)),
		field("LocalSecondaryIndexes", list(structure("LocalSecondaryIndex",
			field("IndexName", str, indexName...),
			field("KeySchema", list(indexKeySchemaElem), notNull(), minLen(1), maxLen(2)),
			field("Projection", projection, notNull()),
		))),
		field("GlobalSecondaryIndexes", list(structure("GlobalSecondaryIndex",
			field("IndexName", str, indexName...),
			field("KeySchema", list(indexKeySchemaElem), notNull(), minLen(1), maxLen(2)),
			field("Projection", projection, notNull()),
			field("ProvisionedThroughput", throughput),
		))),
		field("StreamSpecification", streamSpec),
	),
	"DescribeTable":      structure("DescribeTableInput", controlTableName()),
	"DeleteTable":        structure("DeleteTableInput", controlTableName()),
	"DescribeTimeToLive": structure("DescribeTimeToLiveInput", controlTableName()),
	"ListTables": structure("ListTablesInput",
		field("Limit", integer, atLeast(1), atMost(100)),
		field("ExclusiveStartTableName", str, namePattern(), minLen(3), maxLen(255)),
	),
	"UpdateTable": structure("UpdateTableInput",
		field("GlobalSecondaryIndexUpdates", list(structure("GlobalSecondaryIndexUpdate",
			field("Update", structure("UpdateGlobalSecondaryIndexAction",
				field("IndexName", str, indexName...),
				field("ProvisionedThroughput", throughput, notNull()),
			)),
			field("Create", structure("CreateGlobalSecondaryIndexAction",
				field("IndexName", str, indexName...),
				field("KeySchema", list(indexKeySchemaElem), notNull(), minLen(1), maxLen(2)),
				field("Projection", projection, notNull()),
				field("ProvisionedThroughput", throughput),
			)),
			field("Delete", structure("DeleteGlobalSecondaryIndexAction",
				field("IndexName", str, indexName...),
			)),
		))),
		controlTableName(),
		field("AttributeDefinitions", list(structure("AttributeDefinition",
			field("AttributeName", str, notNull()),
			field("AttributeType", str, notNull(), oneOf("B", "N", "S")),
		))),
		field("ProvisionedThroughput", throughput),
		field("BillingMode", str, oneOf("PROVISIONED", "PAY_PER_REQUEST")),
		field("StreamSpecification", streamSpec),
	),
	"UpdateTimeToLive": structure("UpdateTimeToLiveInput",
		field("TableName", str),
		field("TimeToLiveSpecification", structure("TimeToLiveSpecification",
			field("Enabled", boolean),
			field("AttributeName", str),
		)),
	),
	"TransactGetItems": structure("TransactGetItemsInput",
		field("TransactItems", list(structure("TransactGetItem",
			field("Get", structure("Get",
				field("TableName", str),
				field("Key", attrMap),
				field("ProjectionExpression", str),
				names,
			)),
		))),
		field("ReturnConsumedCapacity", str),
	),
	"TransactWriteItems": structure("TransactWriteItemsInput",
		field("TransactItems", list(structure("TransactWriteItem",
			field("ConditionCheck", txKeyOp("ConditionCheck")),
			field("Put", structure("Put",
				field("TableName", str),
				field("Item", attrMap),
				field("ConditionExpression", str),
				names, vals,
				field("ReturnValuesOnConditionCheckFailure", str),
			)),
			field("Delete", txKeyOp("Delete")),
			field("Update", txKeyOp("Update")),
		))),
		field("ReturnConsumedCapacity", str),
		field("ReturnItemCollectionMetrics", str),
		field("ClientRequestToken", str),
	),
}

// txKeyOp is the shape of a transaction's ConditionCheck, Delete or
// Update (only types: the transaction operations check their own
// constraints).
func txKeyOp(class string) *Shape {
	return structure(class,
		field("TableName", str),
		field("Key", attrMap),
		field("UpdateExpression", str),
		field("ConditionExpression", str),
		names, vals,
		field("ReturnValuesOnConditionCheckFailure", str),
	)
}
