/* The order-summary example's state, shared by the plugin and its tests. */
#ifndef ORDER_SUMMARY_H
#define ORDER_SUMMARY_H

#include "dynafold.h"

/* The read model's entity type: the key's prefix and sort key. */
#define ENTITY_TYPE "OrderSummary"

/* order_summary is a row's state. */
typedef struct order_summary {
    df_str order_id, customer, status;
    int64_t items;
    df_decimal total;
    int64_t version;
} order_summary;

#endif
