//! A small multi-source plugin on the SDK, for tests: two sources, `a`
//! (stream Alpha) and `b` (stream Beta), fold into one row
//! `{pk: "Tally", sk: "T"}` with state `{count, last}`:
//!
//! - `Ping`: count + 1, last = "<source>#<streamId>", effect
//!   `{from: "<source>#<streamId>", kind: "ping", v: <version>}`;
//! - `Close`: removeRow, effect `{from: …, kind: "closed"}`.
//!
//! The same plugin as the AssemblyScript `tally.ts`.

use dynafold_guest::{export, fields, Attrs, Context, Description, Effects, Error, Event, Projection, Source, Step};

fields! {
    /// The row's state.
    pub struct Tally {
        pub count: i64,
        pub last: String,
    }
}

/// The tally projection.
pub struct Tallies;

fn from(ctx: &Context<'_>) -> String {
    format!("{}#{}", ctx.source(), ctx.stream_id())
}

impl Projection for Tallies {
    type State = Tally;

    const DESCRIPTION: Description = Description::multi(
        "tally",
        "1.0.0",
        &[Source::new("Alpha", &["Ping", "Close"]).named("a"), Source::new("Beta", &["Ping", "Close"]).named("b")],
    );

    fn key(&self, _e: &Event<'_>, _ctx: &Context<'_>, key: &mut Attrs<'_>) -> Result<bool, Error> {
        key.s("pk", "Tally").s("sk", "T");
        Ok(true)
    }

    fn initial(&self, _e: Option<&Event<'_>>, _ctx: &Context<'_>) -> Tally {
        Tally::default()
    }

    fn evolve(&self, s: &mut Tally, e: &Event<'_>, ctx: &Context<'_>) -> Result<Step, Error> {
        match e.event_type() {
            "Ping" => {
                s.count += 1;
                s.last = from(ctx);
                Ok(Step::Applied)
            }
            "Close" => Ok(Step::RemoveRow),
            _ => Ok(Step::Skip),
        }
    }

    fn effects(&self, e: &Event<'_>, next: Option<&Tally>, ctx: &Context<'_>, fx: &mut Effects<'_>) {
        fx.map(|m| {
            m.s("from", &from(ctx));
            match next {
                Some(_) => {
                    m.s("kind", "ping").int("v", e.version() as i64);
                }
                None => {
                    m.s("kind", "closed");
                }
            }
        });
    }
}

export!(Tallies);
