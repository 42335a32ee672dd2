//! The order-summary projection (plugins/examples/order-summary) in Rust:
//! the "Order" stream folded into one OrderSummary row per order. It
//! writes exactly the rows of the Go plugin: the same attributes in the
//! same order, totals summed exactly, the same error tags and messages.
//!
//! Build the module (from the repository root, `make plugins` does it):
//!
//! ```sh
//! RUSTC=/usr/bin/rustc cargo build --release --target wasm32-wasi   # Debian's rustc 1.63
//! cargo build --release --target wasm32-wasip1                      # rustup
//! ```

use dynafold_guest::text::quote;
use dynafold_guest::{errorf, export, fields, Attrs, Context, Decimal, Description, Error, Event, Projection, Source, Step};

/// The read model's entity type (the key's prefix and sort key).
pub const ENTITY_TYPE: &str = "OrderSummary";

fields! {
    /// A row's state. `version` is the checkpoint, written by the host.
    #[derive(Debug, PartialEq)]
    pub struct OrderSummary {
        pub order_id: String = "orderId",
        pub customer: String,
        pub status: String,
        pub items: i64,
        /// Exact: prices are money.
        pub total: Decimal,
        pub version: i64,
    }
}

fields! {
    /// The data of an OrderPlaced event.
    pub struct OrderPlaced {
        pub customer: String,
    }
}

/// The order summary projection.
pub struct OrderSummaries;

impl Projection for OrderSummaries {
    type State = OrderSummary;

    const DESCRIPTION: Description =
        Description::single("order-summary", "1.0.0", &[Source::new("Order", &["OrderPlaced", "ItemAdded", "OrderShipped"])]);

    fn key(&self, e: &Event<'_>, _ctx: &Context<'_>, key: &mut Attrs<'_>) -> Result<bool, Error> {
        let mut pk = String::with_capacity(ENTITY_TYPE.len() + 1 + e.stream_id().len());
        pk.push_str(ENTITY_TYPE);
        pk.push('#');
        pk.push_str(e.stream_id());
        key.s("pk", &pk).s("sk", ENTITY_TYPE);
        Ok(true)
    }

    fn initial(&self, _e: Option<&Event<'_>>, ctx: &Context<'_>) -> OrderSummary {
        OrderSummary { order_id: ctx.stream_id().to_string(), status: "new".to_string(), ..Default::default() }
    }

    fn evolve(&self, s: &mut OrderSummary, e: &Event<'_>, _ctx: &Context<'_>) -> Result<Step, Error> {
        match e.event_type() {
            // The hot path: one attribute, read in place, as an exact
            // decimal (f64 would sum 0.1 + 2.25 + … to 5.550000000000001).
            "ItemAdded" => {
                let price = e.decimal("price").ok_or_else(|| errorf!("BadEvent", "ItemAdded v{}: price is not a number", e.version()))?;
                let total = s.total.add(&price);
                if let Err(err) = total.valid() {
                    return Err(errorf!("BadTotal", "ItemAdded v{}: total {}", e.version(), err));
                }
                s.items += 1;
                s.total = total;
            }
            "OrderPlaced" => {
                let d: OrderPlaced = e.decode()?;
                s.customer = d.customer;
                s.status.clear();
                s.status.push_str("placed");
            }
            "OrderShipped" => {
                s.status.clear();
                s.status.push_str("shipped");
            }
            _ => return Err(errorf!("UnknownEvent", "order-summary does not fold {}", quote(e.event_type_bytes()))),
        }
        Ok(Step::Applied)
    }

    /// The stored row: the state plus the byStatus index keys (gsi1).
    fn to_item(&self, s: &OrderSummary, _ctx: &Context<'_>, item: &mut Attrs<'_>) {
        item.fields(s).s("gsi1pk", &s.status).s("gsi1sk", &s.order_id);
    }
}

export!(OrderSummaries);

#[cfg(test)]
mod tests {
    use super::*;
    use dynafold_guest::testing::{check, fold, row, Ev};

    fn order(id: &str, prices: &[&str]) -> Vec<Ev> {
        let mut evs = vec![Ev::new("Order", id, 1, "OrderPlaced").s("customer", "Ada")];
        for (i, p) in prices.iter().enumerate() {
            evs.push(Ev::new("Order", id, i as u64 + 2, "ItemAdded").s("sku", "sku").n("price", p));
        }
        evs
    }

    fn summary(id: &str, status: &str, items: i64, total: &str) -> dynafold_guest::Item {
        row(&[("pk", &format!("OrderSummary#{}", id)), ("sk", "OrderSummary")])
            .s("orderId", id)
            .s("customer", "Ada")
            .s("status", status)
            .int("items", items)
            .n("total", total)
            .int("version", 0)
            .s("gsi1pk", status)
            .s("gsi1sk", id)
            .build()
    }

    #[test]
    fn prices_sum_exactly() {
        check(&OrderSummaries, &order("o-1", &["0.1", "2.25", "1.5", "0.2", "1.5"]), &[summary("o-1", "placed", 5, "5.55")]);
    }

    #[test]
    fn an_unknown_event_fails_the_row() {
        let mut evs = order("o-2", &["1"]);
        evs.push(Ev::new("Order", "o-2", 3, "OrderRefunded"));
        let rows = fold(&OrderSummaries, &evs).unwrap();
        assert_eq!(rows[0].error.as_deref(), Some("OrderRefunded v3: UnknownEvent: order-summary does not fold \"OrderRefunded\""));
        assert!(rows[0].item.is_none());
    }

    #[test]
    fn a_price_that_is_not_a_number_is_bad_event() {
        let evs = vec![Ev::new("Order", "o-3", 1, "ItemAdded").s("price", "12")];
        let rows = fold(&OrderSummaries, &evs).unwrap();
        assert_eq!(rows[0].error.as_deref(), Some("ItemAdded v1: BadEvent: ItemAdded v1: price is not a number"));
    }
}
