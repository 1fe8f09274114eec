# Build: docker build -t tandem .
# Run:   docker run -p 8080:8080 -v tandem-data:/var/lib/tandem tandem
FROM rust:1.95-slim-bookworm AS build
WORKDIR /src
COPY Cargo.toml Cargo.lock clippy.toml ./
COPY src src
COPY migrations migrations
COPY benches benches
COPY tests tests
RUN cargo build --release --locked

FROM debian:bookworm-slim
RUN useradd --system --create-home --home-dir /var/lib/tandem tandem
COPY --from=build /src/target/release/tandem /usr/local/bin/tandem
USER tandem
ENV TANDEM_DATA_DIR=/var/lib/tandem \
    TANDEM_BIND=0.0.0.0:8080
VOLUME /var/lib/tandem
EXPOSE 8080
ENTRYPOINT ["tandem"]
CMD ["serve"]
