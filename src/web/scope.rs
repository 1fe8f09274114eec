//! The scope of the QC tables as a query string gives it (`?task=..&pair=..&versions=all`),
//! for the dashboard, its downloads and the API alike.

use crate::domain::facts::Scope;
use crate::error::Error;
use serde::Deserialize;

/// The scope as the dashboard's query string gives it.
#[derive(Debug, Deserialize, Default, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct ScopeQuery {
    /// Only this task
    pub task: Option<String>,
    /// Only this pair: RATER1,RATER2
    #[param(pattern = r"^[^,]*\S[^,]*,[\s\S]*\S[\s\S]*$")]
    pub pair: Option<String>,
    /// Stage 1 over the first version of every clip (`first`, the default) or over
    /// every version (`all`)
    #[param(pattern = "^(first|all)$")]
    pub versions: Option<String>,
}

impl ScopeQuery {
    pub fn scope(&self) -> Result<Scope, Error> {
        let task = self.task.clone().filter(|t| !t.is_empty());
        let pair = self.pair.as_deref().filter(|p| !p.is_empty());
        Scope::parse(task, pair, self.versions.as_deref().unwrap_or("first")).map_err(Error::from)
    }

    /// The query string that keeps this scope on links.
    pub fn query(&self) -> String {
        let mut q: Vec<(&str, &str)> = Vec::new();
        if let Some(t) = self.task.as_deref().filter(|t| !t.is_empty()) {
            q.push(("task", t));
        }
        if let Some(p) = self.pair.as_deref().filter(|p| !p.is_empty()) {
            q.push(("pair", p));
        }
        if let Some(v) = self.versions.as_deref().filter(|v| *v == "all") {
            q.push(("versions", v));
        }
        if q.is_empty() {
            String::new()
        } else {
            format!("?{}", serde_urlencoded::to_string(&q).unwrap_or_default())
        }
    }
}
