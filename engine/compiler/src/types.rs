//! The type language of compiled rules and its union-find store.
//!
//! Types are inferred for the whole variant at once: a value is an int, a
//! bool, a string, unit, an array of one element type, or a record (a map
//! literal with fixed keys, `this`, a card); anything the inference cannot
//! pin down is `Dyn`, a dynamic value checked at run time. `Dyn` absorbs:
//! once a type is dynamic, so is everything inside it, which keeps a
//! dynamic container from holding typed values the code cannot see.
//!
//! Each array type also has a length ([`Len`]): fixed when every array of
//! the type is made with one length and never resized, so the generated
//! Rust can keep it on the stack (`[T; N]`) instead of the heap (`Vec<T>`).

use std::collections::BTreeMap;

pub type Ty = usize;
pub type RecId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    Unknown,
    Int,
    Bool,
    Str,
    Unit,
    Arr(Ty),
    Rec(RecId),
    Dyn,
}

/// What is known of the length of every array of one type: a small
/// lattice, joined where two array types become one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Len {
    /// Nothing made or resized an array of this type (yet).
    Unknown,
    /// Every array of this type has this many items.
    Fixed(usize),
    /// Lengths differ, change, or come from outside (data, natives).
    Var,
}

impl Len {
    pub fn join(self, other: Len) -> Len {
        match (self, other) {
            (Len::Unknown, x) | (x, Len::Unknown) => x,
            (Len::Fixed(a), Len::Fixed(b)) if a == b => Len::Fixed(a),
            _ => Len::Var,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Field {
    pub ty: Ty,
    /// Present in every value of the record (else an `Option` in Rust).
    pub always: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Rec {
    pub fields: BTreeMap<String, Field>,
    /// A name for the generated struct, when the record has one (`This`,
    /// a deck's cards).
    pub name: Option<String>,
    /// Merged into another record; `fields` moved there.
    pub merged_into: Option<RecId>,
    /// Some value of the record is built (a map literal, `this`, a card):
    /// then a field is always present only if every way of building it
    /// gives the field. A record known only from the fields scripts read
    /// (a parameter's `p.target`) is open: its reads say nothing about
    /// which fields its values have, and its fields are all optional
    /// until a built record joins it.
    pub built: bool,
}

#[derive(Default)]
pub struct Store {
    parent: Vec<Ty>,
    shape: Vec<Shape>,
    /// The length of arrays of each type (read at the class's root).
    len: Vec<Len>,
    pub recs: Vec<Rec>,
    /// Why a type became dynamic (the first reason), for `--explain`.
    pub why_dyn: BTreeMap<Ty, String>,
}

impl Store {
    pub fn fresh(&mut self) -> Ty {
        self.make(Shape::Unknown)
    }

    pub fn make(&mut self, s: Shape) -> Ty {
        let t = self.parent.len();
        self.parent.push(t);
        self.shape.push(s);
        self.len.push(Len::Unknown);
        t
    }

    /// Makes root `child` part of root `root`'s class; the lengths join.
    fn link(&mut self, child: Ty, root: Ty) {
        self.parent[child] = root;
        self.len[root] = self.len[root].join(self.len[child]);
    }

    /// What is known of the length of arrays of type `t`.
    pub fn len(&mut self, t: Ty) -> Len {
        let r = self.find(t);
        self.len[r]
    }

    /// Arrays of type `t` have length `l` too (joined with what was known).
    pub fn set_len(&mut self, t: Ty, l: Len) {
        let r = self.find(t);
        self.len[r] = self.len[r].join(l);
    }

    /// A new array type of elements `el` and length `l`.
    pub fn array(&mut self, el: Ty, l: Len) -> Ty {
        let t = self.make(Shape::Arr(el));
        self.len[t] = l;
        t
    }

    pub fn rec(&mut self, name: Option<String>, fields: BTreeMap<String, Field>) -> Ty {
        self.new_rec(name, fields, true)
    }

    /// An open record (see [`Rec::built`]) with one field, read.
    pub fn open_rec(&mut self, field: &str, ty: Ty) -> Ty {
        let fields = BTreeMap::from([(field.to_string(), Field { ty, always: true })]);
        self.new_rec(None, fields, false)
    }

    fn new_rec(&mut self, name: Option<String>, fields: BTreeMap<String, Field>, built: bool) -> Ty {
        let id = self.recs.len();
        self.recs.push(Rec {
            fields,
            name,
            merged_into: None,
            built,
        });
        self.make(Shape::Rec(id))
    }

    /// Whether field `f` of record `r` is present in every value: never,
    /// for a record no value of which is built.
    pub fn always(&self, r: RecId, f: &Field) -> bool {
        f.always && self.recs[r].built
    }

    pub fn find(&mut self, t: Ty) -> Ty {
        let mut r = t;
        while self.parent[r] != r {
            r = self.parent[r];
        }
        let mut x = t;
        while self.parent[x] != r {
            let next = self.parent[x];
            self.parent[x] = r;
            x = next;
        }
        r
    }

    pub fn shape(&mut self, t: Ty) -> Shape {
        let r = self.find(t);
        self.shape[r].clone()
    }

    pub fn rec_id(&mut self, t: Ty) -> Option<RecId> {
        match self.shape(t) {
            Shape::Rec(mut r) => {
                while let Some(m) = self.recs[r].merged_into {
                    r = m;
                }
                Some(r)
            }
            _ => None,
        }
    }

    pub fn is_dyn(&mut self, t: Ty) -> bool {
        self.shape(t) == Shape::Dyn
    }

    /// Makes `t` and everything inside it dynamic.
    pub fn make_dyn(&mut self, t: Ty, why: &str) {
        let r = self.find(t);
        if self.shape[r] == Shape::Dyn {
            return;
        }
        let old = std::mem::replace(&mut self.shape[r], Shape::Dyn);
        self.why_dyn.entry(r).or_insert_with(|| why.to_string());
        match old {
            Shape::Arr(e) => self.make_dyn(e, why),
            Shape::Rec(id) => {
                let fields: Vec<Ty> = self.recs[id].fields.values().map(|f| f.ty).collect();
                for f in fields {
                    self.make_dyn(f, why);
                }
            }
            _ => {}
        }
    }

    /// Two shapes that can be one type without a conflict (one may still
    /// be unknown inside).
    pub fn compatible(&mut self, a: Ty, b: Ty) -> bool {
        match (self.shape(a), self.shape(b)) {
            (Shape::Unknown, _) | (_, Shape::Unknown) => true,
            (Shape::Arr(x), Shape::Arr(y)) => self.compatible(x, y),
            (Shape::Rec(_), Shape::Rec(_)) => true,
            (x, y) => x == y,
        }
    }

    /// Makes `a` and `b` one type. A conflict (an int where a string was)
    /// makes both dynamic, for the reason given.
    pub fn unify(&mut self, a: Ty, b: Ty, why: &str) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let (sa, sb) = (self.shape[ra].clone(), self.shape[rb].clone());
        match (sa, sb) {
            (Shape::Unknown, _) => self.link(ra, rb),
            (_, Shape::Unknown) => self.link(rb, ra),
            (Shape::Dyn, _) => {
                self.make_dyn(rb, why);
                self.link(rb, ra);
            }
            (_, Shape::Dyn) => {
                self.make_dyn(ra, why);
                self.link(ra, rb);
            }
            (Shape::Arr(x), Shape::Arr(y)) => {
                self.link(rb, ra);
                self.unify(x, y, why);
            }
            (Shape::Rec(x), Shape::Rec(y)) => {
                let (x, y) = (self.rec_root(x), self.rec_root(y));
                self.link(rb, ra);
                if x != y {
                    self.merge_recs(x, y, why);
                    self.shape[ra] = Shape::Rec(x);
                }
            }
            (x, y) if x == y => self.link(rb, ra),
            (x, y) => {
                let why = format!("{why}: {} meets {}", self.describe_shape(&x), self.describe_shape(&y));
                self.make_dyn(ra, &why);
                self.make_dyn(rb, &why);
                self.link(rb, ra);
            }
        }
    }

    fn rec_root(&self, mut r: RecId) -> RecId {
        while let Some(m) = self.recs[r].merged_into {
            r = m;
        }
        r
    }

    /// Moves record `y`'s fields into `x`; a field missing from either side
    /// is no longer always present.
    fn merge_recs(&mut self, x: RecId, y: RecId, why: &str) {
        let theirs = std::mem::take(&mut self.recs[y].fields);
        self.recs[y].merged_into = Some(x);
        if self.recs[x].name.is_none() {
            self.recs[x].name = self.recs[y].name.take();
        }
        // A field one side lacks is not always present, if that side's
        // values are built without it (an open side only lacks a read).
        let (x_built, y_built) = (self.recs[x].built, self.recs[y].built);
        self.recs[x].built = x_built || y_built;
        let mine: Vec<String> = self.recs[x].fields.keys().cloned().collect();
        for k in mine {
            if y_built && !theirs.contains_key(&k) {
                self.recs[x].fields.get_mut(&k).expect("listed").always = false;
            }
        }
        for (k, f) in theirs {
            match self.recs[x].fields.get(&k).cloned() {
                Some(mine) => {
                    self.recs[x].fields.get_mut(&k).expect("present").always = mine.always && f.always;
                    self.unify(mine.ty, f.ty, why);
                }
                None => {
                    self.recs[x].fields.insert(
                        k,
                        Field {
                            ty: f.ty,
                            always: f.always && !x_built,
                        },
                    );
                }
            }
        }
    }

    /// The type of field `name` of record type `t`, adding the field (not
    /// always present) when the record lacks it. None: `t` is no record.
    pub fn field(&mut self, t: Ty, name: &str) -> Option<Ty> {
        let r = self.rec_id(t)?;
        if let Some(f) = self.recs[r].fields.get(name) {
            return Some(f.ty);
        }
        let ft = self.fresh();
        // An open record's new field is only read so far (see `Rec::built`).
        let always = !self.recs[r].built;
        self.recs[r].fields.insert(name.to_string(), Field { ty: ft, always });
        Some(ft)
    }

    fn describe_shape(&self, s: &Shape) -> String {
        match s {
            Shape::Unknown => "an unknown value".into(),
            Shape::Int => "a number".into(),
            Shape::Bool => "true/false".into(),
            Shape::Str => "a string".into(),
            Shape::Unit => "()".into(),
            Shape::Arr(_) => "an array".into(),
            Shape::Rec(_) => "a map".into(),
            Shape::Dyn => "a dynamic value".into(),
        }
    }

    /// The whole structure of a type, fields included (to a depth): two
    /// types with one signature can be one type without a conflict.
    pub fn signature(&mut self, t: Ty, depth: u32) -> String {
        match self.shape(t) {
            Shape::Arr(e) if depth > 0 => format!("[{}]", self.signature(e, depth - 1)),
            Shape::Rec(_) if depth > 0 => {
                let r = self.rec_id(t).expect("a record");
                let fields: Vec<(String, Field)> = self.recs[r]
                    .fields
                    .iter()
                    .map(|(k, f)| (k.clone(), f.clone()))
                    .collect();
                let inner: Vec<String> = fields
                    .into_iter()
                    .map(|(k, f)| {
                        format!(
                            "{k}{}:{}",
                            if f.always && self.recs[r].built { "" } else { "?" },
                            self.signature(f.ty, depth - 1)
                        )
                    })
                    .collect();
                format!("#{{{}}}", inner.join(","))
            }
            s => format!("{s:?}"),
        }
    }

    /// A designer's name for a type, e.g. `array of number`.
    pub fn describe(&mut self, t: Ty) -> String {
        match self.shape(t) {
            Shape::Arr(e) => format!("array of {}", self.describe(e)),
            Shape::Rec(_) => {
                let r = self.rec_id(t).expect("a record");
                match &self.recs[r].name {
                    Some(n) => n.clone(),
                    None => {
                        let keys: Vec<String> = self.recs[r].fields.keys().cloned().collect();
                        format!("map #{{{}}}", keys.join(", "))
                    }
                }
            }
            s => self.describe_shape(&s),
        }
    }
}
