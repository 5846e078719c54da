//! The `atomics` scenario: every op x type, fetching and not, ordered and
//! unordered, against every locale, checked against a shadow value.

use crate::{e, R};
use pgas_tests::check;
use runtime_shim::{AmoType, Atom, AtomInt, GlobalPtr, Runtime};
use std::sync::Arc;

trait Num: Atom {
    fn v(x: i64) -> Self;
    fn plus(self, o: Self) -> Self;
    fn minus(self, o: Self) -> Self;
    fn lesser(self, o: Self) -> Self;
    fn greater(self, o: Self) -> Self;
}

trait Bits: Num + AtomInt {
    fn band(self, o: Self) -> Self;
    fn bor(self, o: Self) -> Self;
    fn bxor(self, o: Self) -> Self;
}

macro_rules! int_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            fn v(x: i64) -> Self { x as $t }
            fn plus(self, o: Self) -> Self { self.wrapping_add(o) }
            fn minus(self, o: Self) -> Self { self.wrapping_sub(o) }
            fn lesser(self, o: Self) -> Self { self.min(o) }
            fn greater(self, o: Self) -> Self { self.max(o) }
        }
        impl Bits for $t {
            fn band(self, o: Self) -> Self { self & o }
            fn bor(self, o: Self) -> Self { self | o }
            fn bxor(self, o: Self) -> Self { self ^ o }
        }
    )*};
}
int_num!(i8, i16, i32, i64, u8, u16, u32, u64);

macro_rules! float_num {
    ($($t:ty),*) => {$(
        impl Num for $t {
            fn v(x: i64) -> Self { x as $t / 4.0 }
            fn plus(self, o: Self) -> Self { self + o }
            fn minus(self, o: Self) -> Self { self - o }
            fn lesser(self, o: Self) -> Self { if o < self { o } else { self } }
            fn greater(self, o: Self) -> Self { if o > self { o } else { self } }
        }
    )*};
}
float_num!(f32, f64);

/// Every arithmetic op on one word, checked against a shadow value `m`.
fn arith<T: Num>(rt: &Runtime, p: GlobalPtr<T>, salt: i64) -> R<T> {
    let a = rt.atomic(p);
    let ctx = |what: &str| format!("{:?} on {p}: {what}", T::TYPE);
    a.write(T::v(5 + salt)).map_err(e)?;
    let mut m = T::v(5 + salt);
    check!(a.read().map_err(e)? == m, "{}", ctx("read after write"));
    let old = a.exchange(T::v(7)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("exchange old"));
    m = T::v(7);
    let r = a.compare_exchange(T::v(7), T::v(9)).map_err(e)?;
    check!(r == Ok(m), "{}: {r:?}", ctx("cmpxchg that must swap"));
    m = T::v(9);
    let r = a.compare_exchange(T::v(7), T::v(11)).map_err(e)?;
    check!(r == Err(m), "{}: {r:?}", ctx("cmpxchg that must not swap"));
    a.add(T::v(3)).map_err(e)?;
    m = m.plus(T::v(3));
    let old = a.fetch_add(T::v(-2)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_add old"));
    m = m.plus(T::v(-2));
    a.sub(T::v(4)).map_err(e)?;
    m = m.minus(T::v(4));
    let old = a.fetch_sub(T::v(100)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_sub old"));
    m = m.minus(T::v(100));
    a.min(T::v(-3)).map_err(e)?;
    m = m.lesser(T::v(-3));
    let old = a.fetch_min(T::v(1)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_min old"));
    m = m.lesser(T::v(1));
    a.max(T::v(50)).map_err(e)?;
    m = m.greater(T::v(50));
    let old = a.fetch_max(T::v(60)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_max old"));
    m = m.greater(T::v(60));
    // Unordered forms: buffered, done at the fence.
    a.add_unordered(T::v(8)).map_err(e)?;
    a.sub_unordered(T::v(3)).map_err(e)?;
    a.max_unordered(T::v(1)).map_err(e)?;
    a.min_unordered(T::v(100)).map_err(e)?;
    m = m
        .plus(T::v(8))
        .minus(T::v(3))
        .greater(T::v(1))
        .lesser(T::v(100));
    rt.unordered_fence().map_err(e)?;
    let got = a.read().map_err(e)?;
    check!(got == m, "{}: {got:?} != {m:?}", ctx("after unordered ops"));
    // A plain GET of the word agrees with the atomic read.
    let raw = rt.get_value(p).map_err(e)?;
    check!(raw == m, "{}: GET {raw:?} != {m:?}", ctx("GET of the word"));
    Ok(m)
}

fn bitwise<T: Bits>(rt: &Runtime, p: GlobalPtr<T>) -> R {
    let mut m = arith(rt, p, 3)?;
    let a = rt.atomic(p);
    let ctx = |what: &str| format!("{:?} on {p}: {what}", T::TYPE);
    a.and(T::v(0x5a)).map_err(e)?;
    m = m.band(T::v(0x5a));
    let old = a.fetch_or(T::v(0x21)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_or old"));
    m = m.bor(T::v(0x21));
    a.xor(T::v(0x7f)).map_err(e)?;
    m = m.bxor(T::v(0x7f));
    let old = a.fetch_and(T::v(-1)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_and old"));
    a.or(T::v(0x100)).map_err(e)?;
    m = m.bor(T::v(0x100));
    let old = a.fetch_xor(T::v(0x3)).map_err(e)?;
    check!(old == m, "{}: {old:?} != {m:?}", ctx("fetch_xor old"));
    m = m.bxor(T::v(0x3));
    a.and_unordered(T::v(0x3c)).map_err(e)?;
    a.or_unordered(T::v(0x41)).map_err(e)?;
    a.xor_unordered(T::v(0x5)).map_err(e)?;
    m = m.band(T::v(0x3c)).bor(T::v(0x41)).bxor(T::v(0x5));
    rt.unordered_fence().map_err(e)?;
    let got = a.read().map_err(e)?;
    check!(got == m, "{}: {got:?} != {m:?}", ctx("after bitwise ops"));
    Ok(())
}

pub(crate) fn atomics(rt: &'static Runtime) -> R {
    let n = rt.num_locales();
    let me = rt.here();
    // Word [src * 10 + type] on every locale: one writer per word.
    let d = rt.alloc_all::<u64>(n * 10).map_err(e)?;
    rt.barrier().map_err(e)?;
    for t in 0..n {
        let base = d.at(t).map_err(e)?.add(me * 10);
        bitwise::<i8>(rt, base.cast())?;
        bitwise::<i16>(rt, base.add(1).cast())?;
        bitwise::<i32>(rt, base.add(2).cast())?;
        bitwise::<i64>(rt, base.add(3).cast())?;
        bitwise::<u8>(rt, base.add(4).cast())?;
        bitwise::<u16>(rt, base.add(5).cast())?;
        bitwise::<u32>(rt, base.add(6).cast())?;
        bitwise::<u64>(rt, base.add(7).cast())?;
        arith::<f32>(rt, base.add(8).cast(), 1)?;
        arith::<f64>(rt, base.add(9).cast(), 2)?;
    }
    // Many tasks hammering one counter per locale with fetch_add: no lost update.
    let hammer = rt.alloc_all::<u64>(1).map_err(e)?;
    rt.barrier().map_err(e)?;
    let h = Arc::new(hammer.clone());
    rt.coforall(8, move |i| {
        for k in 0..50usize {
            let t = (me + i + k) % n;
            rt.atomic(h.at(t).unwrap()).fetch_add(1).unwrap();
        }
    })
    .map_err(e)?;
    rt.barrier().map_err(e)?;
    let got = rt.atomic(hammer.local()).read().map_err(e)?;
    check!(
        got == 400,
        "hammered counter on locale {me} is {got}, expected 400"
    );
    let native: Vec<String> = AmoType::ALL
        .iter()
        .filter(|t| rt.amo_native(**t))
        .map(|t| format!("{t:?}"))
        .collect();
    if me == 0 {
        println!(
            "shim_probe atomics: native types [{}] via_am {}",
            native.join(","),
            native.is_empty()
        );
    }
    rt.free_all(hammer).map_err(e)?;
    rt.free_all(d).map_err(e)
}
