#!/bin/bash
# The production-shape soak (docs/bench/soak/README.md): a scaffolded
# inventory plugin with effects, ddblocal --data --latency 5ms
# --stream-shards 4, three `host run` workers, a webhook outbox (slow 1 in
# 25, 503 1 in 40), hostile input (overdrafts, skipped types, one stream in
# 50 with a bad amount), and kill -9 of a worker, of ddblocal and of
# another worker mid-load. Then: rows against the arithmetic, effects
# against what each row must deliver, host verify. The lag counts as
# drained when every readable shard has an owner and is less than 1 s behind.
#
#   docs/bench/soak/soak.sh [DIR]        (from a dynafold checkout; DIR default /tmp/dynafold-soak)
#   STREAMS=2000 EVENTS=20 K1=8 K2=8 K3=8 PORT=8900 HOOK=8950 docs/bench/soak/soak.sh
set -u
REPO=$(cd "$(dirname "$0")/../../.." && pwd)
S=${1:-/tmp/dynafold-soak}; B=$S/bin; PORT=${PORT:-8900}; HOOK=${HOOK:-8950}
export AWS_ACCESS_KEY_ID=x AWS_SECRET_ACCESS_KEY=x AWS_REGION=us-east-1 PATH="$B:$PATH"
mkdir -p $B
(cd "$REPO" && go build -o $B/host ./cmd/host && go build -o $B/soak ./docs/bench/soak) || exit 1
if [ ! -d $S/inventory ]; then
  (cd $S && host plugin new inventory --sdk "$REPO" >/dev/null) || exit 1
  (cd $S/inventory && go mod tidy >/dev/null 2>&1 && python3 - <<'PY'
import json,re
p='projection.go'; s=open(p).read()
s=s.replace('''	Terminal: func(err error) bool { return guest.HasTag(err, "BelowZero") },
}''','''	Terminal: func(err error) bool { return guest.HasTag(err, "BelowZero") },
	// Effects: a notice of every change of the total.
	Effects: func(e guest.Event, next *Inventory, _ guest.EffectContext) []any {
		if next == nil || (e.Type != "InventoryIncreased" && e.Type != "InventoryDecreased") {
			return nil
		}
		return []any{map[string]any{"id": next.ID, "version": int64(e.Version), "total": next.Total.String()}}
	},
}''')
open(p,'w').write(s)
c=json.load(open('dynafold.json'))
c['endpoint']='http://127.0.0.1:%s'
# an event type the plugin skips (the scaffold lists only those it folds)
c['eventStore']['streams'][0].setdefault('eventTypes',[]).append('InventoryAudited')
c['projections'][0]['revision']={'field':'revision'}
c['projections'][0]['outbox']={'claimFor':'5s','index':'outbox-pending','deliver':{'webhook':{'url':'http://127.0.0.1:%s/fx'}}}
c['sidecar']={'leaseTable':'inventory-leases','batchSize':50,'failure':{'maxRetries':2,'onFailure':{'file':'given-up.jsonl'}}}
json.dump(c,open('dynafold.json','w'),indent=1)
PY
  ) || exit 1
  sed -i "s/%s\",/$PORT\",/; s#127.0.0.1:%s/fx#127.0.0.1:$HOOK/fx#" $S/inventory/dynafold.json
  (cd $S/inventory && make wasm >/dev/null) || exit 1
fi
cd $S/inventory
rm -rf $S/data given-up.jsonl $S/*.log expected.json received.jsonl; mkdir -p $S/data
soak -serve 127.0.0.1:$HOOK -recv received.jsonl & echo $! > $S/hook.pid
startddb() { host ddblocal --addr 127.0.0.1:$PORT --data $S/data --latency 5ms --stream-shards 4 >>$S/ddb.log 2>&1 & echo $! > $S/ddb.pid; sleep 1; }
startw() { host run --config dynafold.json --worker-id w$1 --progress-interval 5s >>$S/w$1.log 2>&1 & echo $! > $S/w$1.pid; }
startddb
host tables create --config dynafold.json > $S/tables.log 2>&1 || { cat $S/tables.log; exit 1; }
for i in 1 2 3; do startw $i; done
soak -streams ${STREAMS:-2000} -events ${EVENTS:-20} -c 8 -bad-every 50 -seed ${SEED:-7} > $S/gen.log 2>&1 &
GEN=$!
sleep ${K1:-8}; echo "$(date +%T) kill -9 w2"; kill -9 $(cat $S/w2.pid); sleep 2; startw 2
sleep ${K2:-8}; echo "$(date +%T) kill -9 ddblocal"; kill -9 $(cat $S/ddb.pid); sleep 3; startddb
sleep ${K3:-8}; echo "$(date +%T) kill -9 w3"; kill -9 $(cat $S/w3.pid); startw 3
wait $GEN; cat $S/gen.log
for t in $(seq 1 120); do
  host status --config dynafold.json --json > $S/status.json 2>/dev/null
  if python3 -c "
import json,sys
s=json.load(open('$S/status.json'))
lags=[x.get('lagMillis') for x in s['shards'] if x['state'] in ('open','closed')]
unowned=[x for x in s['shards'] if x['state']=='unowned']
sys.exit(0 if lags and not unowned and all(l is not None and l<1000 for l in lags) else 1)" 2>/dev/null; then echo "$(date +%T) lag drained"; break; fi
  sleep 2
done
echo "--- rows against the arithmetic"; soak -check | tail -3
# what a killed worker left is delivered by the sweep once its claim ends
# (claimFor 5 s): poll until every effect arrived, for up to 2 minutes
echo "--- effects against what each row must deliver"
for t in $(seq 5 5 120); do sleep 5; soak -checkfx > $S/fx.log 2>&1 && break; done
echo "$(date +%T) effects checked ${t}s after the lag drained"; tail -3 $S/fx.log
echo "--- host verify"; host verify --config dynafold.json > $S/verify.log 2>&1; echo "verify exit $?"; grep -v "could not check\|^error " $S/verify.log | tail -3
echo "--- progress lines (records/s, highest)"; grep -h "host run:" $S/w[123].log | awk '{print $3}' | sort -n | tail -1
for i in 1 2 3; do kill $(cat $S/w$i.pid) 2>/dev/null; done; sleep 2; kill $(cat $S/ddb.pid) $(cat $S/hook.pid) 2>/dev/null
