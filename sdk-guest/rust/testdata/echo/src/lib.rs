//! A test guest of the SDK's codec: evolve decodes each event's data into
//! an [`Item`] (every value kind) and makes it the state, which `to_item`
//! writes back; a data item the decoder rejects fails the event with the
//! decoder's message.

use dynafold_guest::{export, Attrs, Context, Description, Error, Event, Item, Projection, Source, Step};

/// The echo projection.
pub struct Echo;

impl Projection for Echo {
    type State = Item;

    const DESCRIPTION: Description = Description::single("echo", "0.0.1", &[Source::new("Echo", &["Echo"])]);

    fn key(&self, e: &Event<'_>, _ctx: &Context<'_>, key: &mut Attrs<'_>) -> Result<bool, Error> {
        key.s("pk", e.stream_id());
        Ok(true)
    }

    fn initial(&self, _e: Option<&Event<'_>>, _ctx: &Context<'_>) -> Item {
        Item::new()
    }

    fn evolve(&self, s: &mut Item, e: &Event<'_>, _ctx: &Context<'_>) -> Result<Step, Error> {
        *s = e.data()?.unwrap_or_default();
        Ok(Step::Applied)
    }
}

export!(Echo);
