import ArgumentParser

/// The `--database` option of every command that opens the server's database.
struct DatabaseOption: ParsableArguments {
    @Option(help: "The database: sqlite:PATH or postgres://USER:PASS@HOST:PORT/DB.")
    var database = "sqlite:.gamecenter/gamecenter.sqlite"
}
