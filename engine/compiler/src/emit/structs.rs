//! The generated structs: one per record type (`this`, map literals with
//! fixed keys, card records), with their JSON conversions.

use super::*;

impl Emit<'_> {
    pub(super) fn structs(&mut self) -> String {
        let mut out = String::new();
        let ids: Vec<usize> = self.recs.keys().copied().collect();
        for r in ids {
            let tys: Vec<Ty> = self.recs[&r].fields.iter().map(|f| f.2).collect();
            let mut rtys = Vec::new();
            for t in &tys {
                rtys.push(self.rty(*t));
            }
            let copy = {
                let name = self.recs[&r].name.clone();
                name != "This" && tys.iter().all(|&t| self.is_copy(t))
            };
            let info = &self.recs[&r];
            let derive = if copy { "Clone, Copy, " } else { "" };
            let _ = writeln!(
                out,
                "#[derive({derive}Debug, Default, PartialEq)]\npub struct {} {{",
                info.name
            );
            for ((_, id, _, always), rt) in info.fields.iter().zip(&rtys) {
                if *always {
                    let _ = writeln!(out, "    pub {id}: {rt},");
                } else {
                    let _ = writeln!(out, "    pub {id}: Option<{rt}>,");
                }
            }
            let _ = writeln!(out, "}}\n");
            if !copy {
                // Written out for `clone_from`: copying a state into a
                // scratch one (search, rollback) then reuses every vector.
                let _ = writeln!(
                    out,
                    "impl Clone for {0} {{\n    fn clone(&self) -> Self {{\n        {0} {{",
                    info.name
                );
                for (_, id, _, _) in &info.fields {
                    let _ = writeln!(out, "            {id}: self.{id}.clone(),");
                }
                let _ = writeln!(out, "        }}\n    }}\n\n    fn clone_from(&mut self, o: &Self) {{");
                for (_, id, _, _) in &info.fields {
                    let _ = writeln!(out, "        self.{id}.clone_from(&o.{id});");
                }
                let _ = writeln!(out, "    }}\n}}\n");
            }
            // To a dynamic map (keys sorted, as Rhai's maps are) and back.
            let _ = writeln!(
                out,
                "impl ToValue for {} {{\n    fn to_value(&self) -> Value {{\n        let mut m = ValueMap::new();",
                info.name
            );
            for (key, id, _, always) in &info.fields {
                if *always {
                    let _ = writeln!(out, "        m.insert({key:?}.into(), self.{id}.to_value());");
                } else {
                    let _ = writeln!(
                        out,
                        "        if let Some(v) = &self.{id} {{ m.insert({key:?}.into(), v.to_value()); }}"
                    );
                }
            }
            let _ = writeln!(out, "        Value::Map(m)\n    }}\n}}\n");
            // Its text (`${m}`, `to_string(m)`) is the map's.
            let _ = writeln!(
                out,
                "impl rulesmith_runtime::value::Text for {} {{\n    fn push_text(&self, out: &mut String) {{\n        rulesmith_runtime::value::Text::push_text(&self.to_value(), out)\n    }}\n}}\n",
                info.name
            );
            let _ = writeln!(
                out,
                "impl FromValue for {} {{\n    fn from_value(v: Value) -> Result<Self, Fail> {{\n        let mut m = v.into_map()?;\n        Ok({} {{",
                info.name, info.name
            );
            for (key, id, _, always) in &info.fields {
                if *always {
                    let _ = writeln!(
                        out,
                        "            {id}: FromValue::from_value(take_field(&mut m, {key:?})?)?,"
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "            {id}: match m.remove({key:?}) {{ Some(v) => Some(FromValue::from_value(v)?), None => None }},"
                    );
                }
            }
            let _ = writeln!(out, "        }})\n    }}\n}}\n");
        }
        out
    }

    // ----- functions --------------------------------------------------------
}
