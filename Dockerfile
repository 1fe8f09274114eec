# Build:  docker build -t tandem .
# Run:    docker run -p 8080:8080 -v tandem-data:/var/lib/tandem tandem
# Scale-out (several servers, one PostgreSQL, shared media): see docs/operations/scale-out.md.

# ---- build: the release binary, with everything it embeds inside it (templates, static
# files, migrations, the figures' font, the shipped protocols); tests/docs.rs checks that
# every path the build reads is copied here
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock clippy.toml build.rs ./
COPY src src
COPY migrations migrations
COPY templates templates
COPY static static
COPY fonts fonts
COPY protocols protocols
COPY examples/protocols examples/protocols
COPY benches benches
COPY tests tests
RUN cargo build --release --locked --bin tandem

# ---- runtime: the binary, ffmpeg (frame strips, clips without metadata), no root
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --create-home --home-dir /var/lib/tandem tandem
COPY --from=build /src/target/release/tandem /usr/local/bin/tandem
USER tandem
ENV TANDEM_DATA_DIR=/var/lib/tandem \
    TANDEM_BIND=0.0.0.0:8080
VOLUME /var/lib/tandem
EXPOSE 8080
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD ["tandem", "healthcheck"]
ENTRYPOINT ["tandem"]
CMD ["serve"]
