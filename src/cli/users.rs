//! Accounts and who reviews what: `user` (accounts and their roles), `pool` (a
//! campaign's validators), `token` (API tokens) and `pair` (each task's validator pair).

use super::CampaignArg;
use crate::app::accounts::{Created, NewUser};
use crate::domain::Role;
use crate::domain::pairing::Pairing;
use crate::error::{Error, Result};
use crate::store::Store;
use crate::store::accounts::PoolPlacement;
use clap::Subcommand;
use std::io::BufRead;

#[derive(Subcommand, Debug)]
pub enum UserCommand {
    /// Create an account; prints a generated password unless --password-stdin is given
    Add {
        name: String,
        #[arg(long, value_parser = parse_role)]
        role: Role,
        /// Pool index of a validator (task t is reviewed by t mod n and (t+1) mod n)
        #[arg(long)]
        index: Option<i64>,
        /// The campaign a validator, author or participant (study or baseline) works in (a validator joins
        /// its pool); made if new, as an import makes it; admins are server-wide and
        /// take none [default: default]
        #[arg(long)]
        campaign: Option<String>,
        /// Read the password from the first line of standard input
        #[arg(long)]
        password_stdin: bool,
        /// Confirm that tasks get new default pairs (and their unstarted items move);
        /// without it, such a change is only shown
        #[arg(long)]
        yes: bool,
    },
    /// List accounts, each with its role in each campaign
    List,
    /// Give an account an author's, study participant's or baseline participant's role
    /// in a campaign (a person holds one role per campaign, so the groups stay apart), or
    /// take its role there away (`--role none`); validators join a campaign through its
    /// pool (`tandem pool add`) and keep their place; a participant with answers keeps
    /// their role
    Role {
        name: String,
        #[command(flatten)]
        campaign: CampaignArg,
        /// author, participant (the blind study), baseline (the human baseline), or none
        #[arg(long)]
        role: String,
    },
    /// Disable an account: its sessions end and its API tokens are revoked at once;
    /// a validator keeps their pool index (nothing is re-paired)
    Disable { name: String },
    /// Enable a disabled account again (it signs in anew and needs new API tokens)
    Enable { name: String },
}

fn parse_role(s: &str) -> std::result::Result<Role, String> {
    Role::parse(s)
}

impl UserCommand {
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        match self {
            UserCommand::Add {
                name,
                role,
                index,
                campaign,
                password_stdin,
                yes,
            } => {
                let new = NewUser {
                    name,
                    role,
                    password: password_stdin.then(read_password).transpose()?,
                    campaign: match (role, campaign) {
                        (Role::Admin, None) => None,
                        (Role::Admin, Some(_)) => {
                            return Err(Error::field(
                                "campaign",
                                "an admin is server-wide and takes no --campaign",
                            ));
                        }
                        (_, c) => Some(c.unwrap_or_else(|| crate::store::DEFAULT_CAMPAIGN.into())),
                    },
                    index,
                    confirmed: false,
                };
                add(store, new, yes).await
            }
            UserCommand::List => {
                for a in store.accounts().await? {
                    println!(
                        "{}\t{}{}",
                        a.user.name,
                        a.user.describe(),
                        if a.disabled { "\tdisabled" } else { "" }
                    );
                }
                Ok(())
            }
            UserCommand::Role {
                name,
                campaign,
                role,
            } => {
                let role = match role.trim() {
                    "none" => None,
                    r => Some(parse_role(r).map_err(|m| Error::field("role", m))?),
                };
                store.set_role(&name, &campaign.campaign, role).await?;
                match role {
                    Some(r) => println!(
                        "{name} is {} of campaign `{}`",
                        r.with_article(),
                        campaign.campaign
                    ),
                    None => println!("{name} holds no role in campaign `{}`", campaign.campaign),
                }
                Ok(())
            }
            UserCommand::Disable { name } => {
                if store.set_disabled(&name, true).await? {
                    println!(
                        "{name} is disabled: their sessions ended and their API tokens are revoked"
                    );
                } else {
                    println!("{name} was already disabled");
                }
                Ok(())
            }
            UserCommand::Enable { name } => {
                if store.set_disabled(&name, false).await? {
                    println!("{name} is enabled: they sign in again, and need new API tokens");
                } else {
                    println!("{name} was not disabled");
                }
                Ok(())
            }
        }
    }
}

/// The password on the first line of standard input.
fn read_password() -> Result<String> {
    let mut line = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut line)
        .map_err(|e| Error::io("cannot read the password from standard input", e))?;
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// `tandem user add`: the account made (once `--yes` confirms the new pairs a validator
/// gives), with its generated password shown once.
async fn add(store: &Store, mut new: NewUser, yes: bool) -> Result<()> {
    let created = match crate::app::accounts::create_user(store, new.clone()).await? {
        Created::NeedsConfirmation(changes) => {
            confirm_pairs(
                new.campaign.as_deref().unwrap_or_default(),
                &new.name,
                new.index.unwrap_or(0),
                &changes,
                yes,
            )?;
            new.confirmed = true;
            crate::app::accounts::create_user(store, new).await?
        }
        done => done,
    };
    if let Created::User {
        user,
        generated_password,
    } = created
    {
        match generated_password {
            Some(password) => {
                println!(
                    "created {} ({}) with password: {password}",
                    user.name,
                    user.describe()
                );
                println!("(shown once; it is stored only as an argon2id hash)");
            }
            None => println!("created {} ({})", user.name, user.describe()),
        }
    }
    Ok(())
}

/// The new pairs that placing `name` at pool `index` gives: printed when `--yes`
/// confirms them, else the refusal that asks for it (nothing is changed then).
fn confirm_pairs(
    campaign: &str,
    name: &str,
    index: i64,
    changes: &[crate::store::catalog::PairChange],
    yes: bool,
) -> Result<()> {
    let list: Vec<String> = changes
        .iter()
        .map(|c| format!("  {}", c.describe()))
        .collect();
    if yes {
        eprintln!("new pairs in campaign `{campaign}`:\n{}", list.join("\n"));
        return Ok(());
    }
    Err(Error::Conflict(format!(
        "placing {name} at pool index {index} gives {} task(s) of campaign `{campaign}` a new pair:\n{}\nnothing was changed; run again with --yes to confirm",
        changes.len(),
        list.join("\n")
    )))
}

#[derive(Subcommand, Debug)]
pub enum PoolCommand {
    /// Put an existing account in a campaign's validator pool: its role there
    Add {
        name: String,
        #[arg(long)]
        index: i64,
        #[command(flatten)]
        campaign: CampaignArg,
        /// Confirm that tasks get new default pairs (and their unstarted items move);
        /// without it, such a change is only shown
        #[arg(long)]
        yes: bool,
    },
}

impl PoolCommand {
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        let PoolCommand::Add {
            name,
            index,
            campaign,
            yes,
        } = self;
        let placement = PoolPlacement {
            campaign: campaign.campaign.clone(),
            index,
        };
        if let Some(changes) =
            crate::app::accounts::place_in_pool(store, &name, placement.clone(), false).await?
        {
            confirm_pairs(&campaign.campaign, &name, index, &changes, yes)?;
            crate::app::accounts::place_in_pool(store, &name, placement, true).await?;
        }
        println!(
            "{name} joined the pool of campaign `{}` with index {index}",
            campaign.campaign
        );
        Ok(())
    }
}

#[derive(Subcommand, Debug)]
pub enum TokenCommand {
    /// Create an API token for a user and print it (it is shown only once)
    Create {
        name: String,
        #[arg(long, default_value = "cli")]
        label: String,
    },
    /// Revoke every API token of a user
    Revoke { name: String },
}

impl TokenCommand {
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        match self {
            TokenCommand::Create { name, label } => {
                let token = store.create_token(&name, &label).await?;
                println!("{token}");
                eprintln!("(API token for {name}; shown once, stored only as a SHA-256 digest)");
            }
            TokenCommand::Revoke { name } => {
                let n = store.revoke_tokens(&name).await?;
                println!("revoked {n} API token(s) of {name}");
            }
        }
        Ok(())
    }
}

#[derive(Subcommand, Debug)]
pub enum PairCommand {
    /// List the tasks with their pairs
    List {
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Override a task's pair: RATER1 is rater 1 in the statistics
    Set {
        task: String,
        rater1: String,
        rater2: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
    /// Go back to the default pair from the pool
    Clear {
        task: String,
        #[command(flatten)]
        campaign: CampaignArg,
    },
}

impl PairCommand {
    /// Sets or clears a task's pair if asked, then lists the pairs (or, pairing per
    /// clip, the pool and each one's open work).
    pub(super) async fn run(self, store: &Store) -> Result<()> {
        let (campaign, change) = match &self {
            PairCommand::List { campaign } => (campaign, None),
            PairCommand::Set {
                task,
                rater1,
                rater2,
                campaign,
            } => (
                campaign,
                Some((task, Some((rater1.as_str(), rater2.as_str())))),
            ),
            PairCommand::Clear { task, campaign } => (campaign, Some((task, None))),
        };
        let campaign = store.campaign(&campaign.campaign).await?;
        if let Some((task, pair)) = change {
            store.set_pair(&campaign, task, pair).await?;
        }
        if campaign.taxonomy.pairing == Pairing::LeastOpenWork {
            // No task pairs: the pool and the work that decides each new clip's pair.
            println!(
                "campaign `{}` pairs per clip, by least open work: each clip, when it enters review, goes to the two validators with the fewest items waiting",
                campaign.name
            );
            for (index, name, open) in store.open_work(&campaign).await? {
                match open {
                    Some(n) => println!("#{index:<3} {name:<14} {n} item(s) waiting"),
                    None => println!("#{index:<3} {name:<14} disabled: takes no new clips"),
                }
            }
            return Ok(());
        }
        for t in store.tasks(&campaign).await? {
            let pair = match (&t.rater1, &t.rater2) {
                (Some(a), Some(b)) => format!(
                    "{a}, {b}{}",
                    if t.overridden {
                        " (set by an admin)"
                    } else {
                        ""
                    }
                ),
                _ => format!("no pair: {}", t.pair_problem.unwrap_or_default()),
            };
            println!("{:>2} {:<14} {pair}", t.position, t.code);
        }
        Ok(())
    }
}
