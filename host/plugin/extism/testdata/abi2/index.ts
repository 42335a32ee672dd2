// A test guest of the Extism transport built for ABI 2.3, which this host
// must refuse.
export { describe, key, evolve } from "../misbehave/index";

export function dynafold_abi_version(): i32 {
  return (2 << 16) | 3;
}
