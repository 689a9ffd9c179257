;; The bitset passes of api/engine/bitset.ts in WebAssembly (api/engine/bitset-kernel.ts loads it;
;; `make schemas` compiles it to bitset-kernel.wasm). Every set is `n` 32-bit words at a byte
;; offset of the imported memory, where the engine's indexes and its scratch sets live. Words go
;; two at a time as i64, with i64.popcnt (one instruction), and the odd last word as i32.
(module
  (import "env" "memory" (memory 1))

  ;; The population count of a (n words).
  (func (export "count") (param $a i32) (param $n i32) (result i32)
    (local $end i32) (local $c i64)
    (local.set $end (i32.add (local.get $a) (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $c (i64.add (local.get $c) (i64.popcnt (i64.load (local.get $a)))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then (local.set $c (i64.add (local.get $c) (i64.extend_i32_u (i32.popcnt (i32.load (local.get $a))))))))
    (i32.wrap_i64 (local.get $c)))

  ;; into = a, and its population count.
  (func (export "and1") (param $into i32) (param $a i32) (param $n i32) (result i32)
    (local $end i32) (local $c i64) (local $x i64)
    (local.set $end (i32.add (local.get $a) (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $x (i64.load (local.get $a)))
        (i64.store (local.get $into) (local.get $x))
        (local.set $c (i64.add (local.get $c) (i64.popcnt (local.get $x))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $into (i32.add (local.get $into) (i32.const 8)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (i32.store (local.get $into) (i32.load (local.get $a)))
        (local.set $c (i64.add (local.get $c) (i64.extend_i32_u (i32.popcnt (i32.load (local.get $a))))))))
    (i32.wrap_i64 (local.get $c)))

  ;; into = a & b, and its population count (into may be a or b).
  (func (export "and2") (param $into i32) (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $end i32) (local $c i64) (local $x i64) (local $y i32)
    (local.set $end (i32.add (local.get $a) (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $x (i64.and (i64.load (local.get $a)) (i64.load (local.get $b))))
        (i64.store (local.get $into) (local.get $x))
        (local.set $c (i64.add (local.get $c) (i64.popcnt (local.get $x))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $b (i32.add (local.get $b) (i32.const 8)))
        (local.set $into (i32.add (local.get $into) (i32.const 8)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $y (i32.and (i32.load (local.get $a)) (i32.load (local.get $b))))
        (i32.store (local.get $into) (local.get $y))
        (local.set $c (i64.add (local.get $c) (i64.extend_i32_u (i32.popcnt (local.get $y)))))))
    (i32.wrap_i64 (local.get $c)))

  ;; into = a & b & d, and its population count (into may be any of them).
  (func (export "and3") (param $into i32) (param $a i32) (param $b i32) (param $d i32) (param $n i32) (result i32)
    (local $end i32) (local $c i64) (local $x i64) (local $y i32)
    (local.set $end (i32.add (local.get $a) (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (local.set $x (i64.and (i64.and (i64.load (local.get $a)) (i64.load (local.get $b))) (i64.load (local.get $d))))
        (i64.store (local.get $into) (local.get $x))
        (local.set $c (i64.add (local.get $c) (i64.popcnt (local.get $x))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $b (i32.add (local.get $b) (i32.const 8)))
        (local.set $d (i32.add (local.get $d) (i32.const 8)))
        (local.set $into (i32.add (local.get $into) (i32.const 8)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then
        (local.set $y (i32.and (i32.and (i32.load (local.get $a)) (i32.load (local.get $b))) (i32.load (local.get $d))))
        (i32.store (local.get $into) (local.get $y))
        (local.set $c (i64.add (local.get $c) (i64.extend_i32_u (i32.popcnt (local.get $y)))))))
    (i32.wrap_i64 (local.get $c)))

  ;; into |= a.
  (func (export "or1") (param $into i32) (param $a i32) (param $n i32)
    (local $end i32)
    (local.set $end (i32.add (local.get $a) (i32.shl (i32.shr_u (local.get $n) (i32.const 1)) (i32.const 3))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $a) (local.get $end)))
        (i64.store (local.get $into) (i64.or (i64.load (local.get $into)) (i64.load (local.get $a))))
        (local.set $a (i32.add (local.get $a) (i32.const 8)))
        (local.set $into (i32.add (local.get $into) (i32.const 8)))
        (br $next)))
    (if (i32.and (local.get $n) (i32.const 1))
      (then (i32.store (local.get $into) (i32.or (i32.load (local.get $into)) (i32.load (local.get $a)))))))

  ;; For each set bit p of matched (n words), the bit rankOf[p] set in ranks (rankOf: one i32 a row):
  ;; a set's rows moved into the order of a permutation, whose set bits in order are a value sort's page.
  (func (export "ranks") (param $ranks i32) (param $matched i32) (param $rankOf i32) (param $n i32)
    (local $w i32) (local $x i32) (local $r i32) (local $at i32)
    (block $done
      (loop $word
        (br_if $done (i32.ge_u (local.get $w) (local.get $n)))
        (local.set $x (i32.load (i32.add (local.get $matched) (i32.shl (local.get $w) (i32.const 2)))))
        (block $bits
          (loop $bit
            (br_if $bits (i32.eqz (local.get $x)))
            (local.set $r
              (i32.load (i32.add (local.get $rankOf)
                (i32.shl (i32.or (i32.shl (local.get $w) (i32.const 5)) (i32.ctz (local.get $x))) (i32.const 2)))))
            (local.set $at (i32.add (local.get $ranks) (i32.shl (i32.shr_u (local.get $r) (i32.const 5)) (i32.const 2))))
            (i32.store (local.get $at) (i32.or (i32.load (local.get $at)) (i32.shl (i32.const 1) (local.get $r))))
            (local.set $x (i32.and (local.get $x) (i32.sub (local.get $x) (i32.const 1))))
            (br $bit)))
        (local.set $w (i32.add (local.get $w) (i32.const 1)))
        (br $word)))))

